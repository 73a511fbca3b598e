package outbox

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/sink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const secret = "s3cret-for-tests"

// receiver is a loopback OrgLoop coding-agent webhook: it checks the
// signature as OrgLoop does, answers status (200 unless set), and counts
// the posts it accepted per event id. It can go down and come back on the
// same address.
type receiver struct {
	t    *testing.T
	addr string

	mu       sync.Mutex
	srv      *http.Server
	status   int
	accepted map[string]int // event id → accepted posts
	bodies   []map[string]any
	calls    int
	badSig   int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, accepted: map[string]int{}}
	r.up()
	t.Cleanup(r.down)
	return r
}

func (r *receiver) url() string { return "http://" + r.addr + "/webhook/lifeloop" }

func (r *receiver) up() {
	addr := r.addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger for a moment after down
		if ln, err = (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		r.t.Fatal(err)
	}
	r.addr = ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(r.serve)}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

func (r *receiver) down() {
	r.mu.Lock()
	srv := r.srv
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	want := "sha256=" + hex.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(req.Header.Get("X-Hub-Signature-256")), []byte(want)) {
		r.badSig++
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if r.status != 0 && r.status != http.StatusOK {
		w.WriteHeader(r.status)
		return
	}
	var v map[string]any
	if err := json.Unmarshal(body, &v); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	id := req.Header.Get("X-Lifeloop-Event-Id")
	r.accepted[id]++
	r.bodies = append(r.bodies, v)
	w.WriteHeader(http.StatusOK)
}

func (r *receiver) snapshot() (accepted map[string]int, bodies []map[string]any, calls, badSig int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := map[string]int{}
	for k, v := range r.accepted {
		a[k] = v
	}
	return a, append([]map[string]any(nil), r.bodies...), r.calls, r.badSig
}

// session is a ledger being written as a wrapped session would.
type session struct {
	t   *testing.T
	dir string
	led *ledger.Ledger
	n   int
}

func newSession(t *testing.T) *session {
	dir := t.TempDir()
	led, err := ledger.Open(filepath.Join(dir, "receipts.jsonl"), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = led.Close() })
	return &session{t: t, dir: dir, led: led}
}

func (s *session) append(ev contract.Event, sum map[string]any) {
	s.t.Helper()
	s.n++
	id := "lfr_" + string(rune('a'+s.n))
	r := contract.LifecycleReceipt{
		SchemaVersion: contract.ReceiptSchemaVersion, ReceiptID: id, ClientID: "lifeloop", AdapterID: "claude",
		InvocationID: "inv_1", Event: ev, EventID: "evt_" + id, IntegrationMode: contract.ModeLauncherWrapper,
		Status: contract.StatusObserved, AtEpochS: 1778100000 + int64(s.n), TelemetrySummary: sum,
	}
	if _, _, err := s.led.Append(r); err != nil {
		s.t.Fatal(err)
	}
}

func (s *session) start() {
	s.append(contract.EventSessionStarting, nil)
	s.append(contract.EventSessionStarted, nil)
	s.append(contract.EventSupervisorTick, nil)
	s.append(contract.EventFrameOpened, nil)
}

func (s *session) end(code int) {
	f := contract.ExitFacts{Code: code}
	at := time.Unix(1778100000, 0)
	s.append(contract.EventSessionEnded, contract.SessionEndedSummary(contract.ClassifyExit(f), f, at, at.Add(7*time.Second), "/work/repo"))
}

func (s *session) open(t *testing.T, url string) *Outbox {
	t.Helper()
	w := &sink.Webhook{URL: url, Secret: []byte(secret), Timeout: 2 * time.Second}
	cfg := OrgLoopWebhook(filepath.Join(s.dir, "receipts.jsonl"), filepath.Join(s.dir, "orgloop-webhook.json"), w,
		contract.OrgLoopOptions{SessionID: "ses_T", Cwd: "/work/repo"}, func(string) string { return contract.HarnessClaudeCode })
	cfg.MinBackoff, cfg.MaxBackoff = 20*time.Millisecond, 100*time.Millisecond
	o, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}

// run starts o.Run and returns a function that waits for its result.
func run(ctx context.Context, o *Outbox) func() error {
	done := make(chan error, 1)
	go func() { done <- o.Run(ctx) }()
	return func() error {
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			return errors.New("Run did not return")
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDeliversStartAndStopSigned(t *testing.T) {
	rcv := newReceiver(t)
	s := newSession(t)
	o := s.open(t, rcv.url())
	wait := run(context.Background(), o)
	s.start()
	waitFor(t, "the start post", func() bool { a, _, _, _ := rcv.snapshot(); return len(a) == 1 })
	s.end(0)
	o.Finish()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	accepted, bodies, calls, bad := rcv.snapshot()
	if len(accepted) != 2 || calls != 2 || bad != 0 {
		t.Fatalf("accepted=%v calls=%d bad signatures=%d", accepted, calls, bad)
	}
	if bodies[0]["hook_type"] != "start" || bodies[1]["hook_type"] != "stop" || bodies[1]["exit_status"] != 0.0 || bodies[1]["duration_seconds"] != 7.0 || bodies[0]["session_id"] != "ses_T" {
		t.Fatalf("bodies = %v", bodies)
	}
	st := o.State()
	if st.Delivered != 2 || st.Through != 5 || len(st.Undeliverable) != 0 {
		t.Fatalf("state = %+v", st)
	}
	if fi, err := os.Stat(filepath.Join(s.dir, "orgloop-webhook.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cursor file: %v %v", fi, err)
	}
}

// TestReceiverDownThenBack: the receiver is down while the session
// starts and ends; when it comes back, each post arrives exactly once.
func TestReceiverDownThenBack(t *testing.T) {
	rcv := newReceiver(t)
	s := newSession(t)
	o := s.open(t, rcv.url())
	rcv.down()
	wait := run(context.Background(), o)
	s.start()
	waitFor(t, "retries", func() bool { return o.Retries() >= 3 })
	s.end(3)
	o.Finish() // the harness is gone; Run still owes both posts
	time.Sleep(150 * time.Millisecond)
	if a, _, _, _ := rcv.snapshot(); len(a) != 0 {
		t.Fatalf("delivered while down: %v", a)
	}
	rcv.up()
	if err := wait(); err != nil {
		t.Fatal(err)
	}
	accepted, bodies, calls, bad := rcv.snapshot()
	if len(accepted) != 2 || calls != 2 || bad != 0 {
		t.Fatalf("accepted=%v calls=%d bad=%d", accepted, calls, bad)
	}
	for id, n := range accepted {
		if n != 1 {
			t.Fatalf("event %s accepted %d times", id, n)
		}
	}
	if bodies[0]["hook_type"] != "start" || bodies[1]["hook_type"] != "stop" || bodies[1]["exit_status"] != 3.0 {
		t.Fatalf("bodies = %v", bodies)
	}
}

// TestRestartResumesFromCursor: lifeloop delivers the start, is gone
// while the receiver is down, and a new deliverer sends only the stop.
func TestRestartResumesFromCursor(t *testing.T) {
	rcv := newReceiver(t)
	s := newSession(t)
	o := s.open(t, rcv.url())
	ctx, kill := context.WithCancel(context.Background())
	wait := run(ctx, o)
	s.start()
	// Wait for the outbox to have its answer (not only for the receiver to
	// have the post): a receiver going down between taking a post and
	// answering it gets that post again, which is the documented window.
	waitFor(t, "the start delivered", func() bool { return o.State().Delivered == 1 })
	rcv.down()
	s.end(143)
	waitFor(t, "retries of the stop", func() bool { return o.Retries() >= 2 })
	kill()
	if err := wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	_ = o.Close()

	rcv.up()
	o2 := s.open(t, rcv.url())
	if st := o2.State(); st.Delivered != 1 {
		t.Fatalf("cursor after restart = %+v", st)
	}
	o2.Finish()
	if err := run(context.Background(), o2)(); err != nil {
		t.Fatal(err)
	}
	accepted, bodies, _, _ := rcv.snapshot()
	if len(accepted) != 2 || len(bodies) != 2 || bodies[1]["exit_status"] != 143.0 {
		t.Fatalf("accepted=%v bodies=%v", accepted, bodies)
	}
	for id, n := range accepted {
		if n != 1 {
			t.Fatalf("event %s accepted %d times", id, n)
		}
	}
	if st := o2.State(); st.Delivered != 2 || st.Through != 5 {
		t.Fatalf("state = %+v", st)
	}
}

func TestRefusedPostIsRecordedNotRetried(t *testing.T) {
	rcv := newReceiver(t)
	rcv.mu.Lock()
	rcv.status = http.StatusUnprocessableEntity
	rcv.mu.Unlock()
	s := newSession(t)
	s.start()
	s.end(0)
	o := s.open(t, rcv.url())
	o.Finish()
	if err := run(context.Background(), o)(); err != nil {
		t.Fatal(err)
	}
	_, _, calls, _ := rcv.snapshot()
	st := o.State()
	if calls != 2 || o.Retries() != 0 || st.Delivered != 0 || len(st.Undeliverable) != 2 || st.Undeliverable[0].Sequence != 2 || st.Undeliverable[0].Error != "receiver answered 422 Unprocessable Entity" {
		t.Fatalf("calls=%d retries=%d state=%+v", calls, o.Retries(), st)
	}
	// A second run has nothing left to send.
	_ = o.Close()
	o2 := s.open(t, rcv.url())
	o2.Finish()
	if err := run(context.Background(), o2)(); err != nil {
		t.Fatal(err)
	}
	if _, _, calls, _ := rcv.snapshot(); calls != 2 {
		t.Fatalf("calls after a second run = %d", calls)
	}
}

func TestWrongSecretIsRefused(t *testing.T) {
	rcv := newReceiver(t)
	s := newSession(t)
	s.start()
	w := &sink.Webhook{URL: rcv.url(), Secret: []byte("not the secret")}
	cfg := OrgLoopWebhook(filepath.Join(s.dir, "receipts.jsonl"), filepath.Join(s.dir, "c.json"), w,
		contract.OrgLoopOptions{SessionID: "ses_T"}, func(string) string { return contract.HarnessOther })
	o, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	o.Finish()
	if err := run(context.Background(), o)(); err != nil {
		t.Fatal(err)
	}
	if _, _, _, bad := rcv.snapshot(); bad != 1 || len(o.State().Undeliverable) != 1 {
		t.Fatalf("bad signatures=%d state=%+v", bad, o.State())
	}
}

func TestSecondDelivererIsKeptOut(t *testing.T) {
	s := newSession(t)
	s.open(t, "http://127.0.0.1:1/x")
	w := &sink.Webhook{URL: "http://127.0.0.1:1/x"}
	cfg := OrgLoopWebhook(filepath.Join(s.dir, "receipts.jsonl"), filepath.Join(s.dir, "orgloop-webhook.json"), w, contract.OrgLoopOptions{SessionID: "ses_T"}, func(string) string { return "" })
	if _, err := Open(cfg); err == nil {
		t.Fatal("a second Open of the same cursor succeeded")
	}
}

// TestRenewalStopCarriesItsDuration: the stop post of a renewal (whose
// receipt records no duration) carries how long the harness incarnation
// it ends ran, from that incarnation's session.started, also when the
// outbox resumes from its cursor after the start was delivered; the
// session's final stop keeps the duration its receipt records, and a
// start post says 0 (nothing has run yet).
func TestRenewalStopCarriesItsDuration(t *testing.T) {
	rcv := newReceiver(t)
	s := newSession(t)
	s.start() // session.started is receipt 2, at 1778100002
	o := s.open(t, rcv.url())
	o.Finish()
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	_ = o.Close()
	renewal := func(step string, more map[string]any) map[string]any {
		m := map[string]any{"reason": "renewal", "renewal_attempt": 1, "renewal_step": step, "resume": true}
		for k, v := range more {
			m[k] = v
		}
		return m
	}
	s.append(contract.EventSessionEnding, renewal("ending", nil))
	s.append(contract.EventSessionEnded, renewal("ended", map[string]any{"exit_code": 143, "stopped_by": "renewal", "phase": "stopped", "outcome": "cancelled", "exit_reason": "renewal"})) // receipt 6
	s.append(contract.EventSessionStarted, renewal("started", nil))
	s.end(0)
	o = s.open(t, rcv.url())
	o.Finish()
	if err := o.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, bodies, _, _ := rcv.snapshot()
	var got []string
	for _, b := range bodies {
		got = append(got, fmt.Sprintf("%v %v %v", b["hook_type"], b["session_id"], b["duration_seconds"]))
	}
	want := []string{"start ses_T 0", "stop ses_T.r1 4", "start ses_T.r1 0", "stop ses_T 7"}
	if !slices.Equal(got, want) {
		t.Fatalf("posts (hook, session, duration) %q, want %q", got, want)
	}
}
