package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/handoff"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// scriptedPolicy answers Next with its decisions in order, then Done,
// and keeps what the runner told it.
type scriptedPolicy struct {
	mu        sync.Mutex
	decisions []autorenew.Decision
	observed  []contract.Event
	answered  []autorenew.Result
	reported  int
	hour      int
	whys      []string
}

func (p *scriptedPolicy) Observe(r contract.LifecycleReceipt) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.observed = append(p.observed, r.Event)
}

func (p *scriptedPolicy) Next(time.Time) autorenew.Decision {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.decisions) == 0 {
		return autorenew.Decision{Action: autorenew.Done}
	}
	d := p.decisions[0]
	p.decisions = p.decisions[1:]
	return d
}

func (p *scriptedPolicy) AnsweredBecause(_ time.Time, res autorenew.Result, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answered = append(p.answered, res)
	p.whys = append(p.whys, why)
}

// ThisHour is hour when set, else the renewals answered Renewed or
// Failed.
func (p *scriptedPolicy) ThisHour(time.Time) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hour > 0 {
		return p.hour
	}
	n := 0
	for _, a := range p.answered {
		if a == autorenew.Renewed || a == autorenew.Failed {
			n++
		}
	}
	return n
}

func (p *scriptedPolicy) Reported(time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reported++
}

// fakeLease has a free slot or none.
type fakeLease struct{ free bool }

func (l fakeLease) TryAcquire() (*autorenew.Slot, bool, error) {
	if !l.free {
		return nil, false, nil
	}
	return &autorenew.Slot{}, true, nil
}

// policyWrapper serves a session's control socket: renew answers with
// answer, emit is kept.
type policyWrapper struct {
	mu     sync.Mutex
	answer func() (any, error)
	renews []renewal.Request
	emits  []map[string]any
}

func (w *policyWrapper) handle(_ context.Context, req control.Request) (any, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch req.Op {
	case control.OpRenew:
		var r renewal.Request
		if err := json.Unmarshal(req.Args, &r); err != nil {
			return nil, err
		}
		w.renews = append(w.renews, r)
		return w.answer()
	case control.OpEmit:
		var m map[string]any
		if err := json.Unmarshal(req.Args, &m); err != nil {
			return nil, err
		}
		w.emits = append(w.emits, m)
		return map[string]any{"sequence": len(w.emits)}, nil
	}
	return nil, control.ErrNotLive
}

// runnerFixture is one running session with a fake wrapper and a
// runner on a scripted policy.
type runnerFixture struct {
	root    string
	rec     statedir.SessionRecord
	wrapper *policyWrapper
	policy  *scriptedPolicy
	runner  *policyRunner
	out     *bytes.Buffer
}

// newRunnerFixture records session ses_test (harness claude) whose
// ledger holds summaries as frame.ended receipts, serves its control
// socket with w (none when w is nil), and builds its runner.
func newRunnerFixture(t *testing.T, w *policyWrapper, o autorenewOptions, decisions []autorenew.Decision, summaries ...map[string]any) *runnerFixture {
	t.Helper()
	root := t.TempDir()
	started := time.Now().UTC()
	rec := statedir.SessionRecord{ID: "ses_test", State: statedir.StateRunning, AdapterID: "claude", Cwd: root, StartedAt: &started}
	if _, err := statedir.CreateSessionDir(root, rec.ID); err != nil {
		t.Fatal(err)
	}
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	l, err := ledger.Open(statedir.ReceiptsPath(root, rec.ID), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range summaries {
		r := contract.LifecycleReceipt{ClientID: "c", AdapterID: "claude", InvocationID: "inv", Event: contract.EventFrameEnded, EventID: "e", IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, TelemetrySummary: s}
		if _, _, err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	_ = l.Close()
	if w != nil {
		srv, err := control.Listen(control.SocketFor(root, rec.ID), w.handle, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Close)
	}
	if o.AtOnce == 0 {
		o.AtOnce = 2
	}
	if o.MaxNoteBytes == 0 {
		o.MaxNoteBytes = handoff.DefaultMaxBytes
	}
	o.RenewAt = "70%"
	out := &bytes.Buffer{}
	e := &env{Streams: Streams{Out: out, Err: out, Now: time.Now, IDs: ids.NewULIDSource(time.Now, nil), Environ: os.Environ(), Getenv: os.Getenv}}
	cfg := autorenew.Config{Threshold: autorenew.Threshold{Percent: 70}, PerHour: 3, Resume: o.Resume}
	p := &scriptedPolicy{decisions: decisions}
	r := newPolicyRunner(e, root, rec, o, cfg, newDecisionPrinter(e, true))
	r.policy, r.lease = p, fakeLease{free: true}
	return &runnerFixture{root: root, rec: rec, wrapper: w, policy: p, runner: r, out: out}
}

// run runs the runner until its script is done (bounded).
func (f *runnerFixture) run(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := f.runner.runGuarded(ctx); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the runner did not end with its script")
	}
}

// state reads the session's autorenew.json.
func (f *runnerFixture) state(t *testing.T) autorenew.State {
	t.Helper()
	path := autorenew.StatePath(statedir.SessionDir(f.root, f.rec.ID))
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("%s: %v %v", path, fi, err)
	}
	st, err := autorenew.ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// renewAt70 is a Renew decision at 71.3 % of a 70 % threshold.
func renewAt70(resume bool) autorenew.Decision {
	return autorenew.Decision{Action: autorenew.Renew, Resume: resume, Evidence: renewal.Policy{
		Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, Window: 100000, ThisHour: 1, PerHour: 3,
	}}
}

func delivered() (any, error) {
	return renewal.Outcome{State: renewal.StateDelivered, Attempt: 1}, nil
}

// TestAutorenewRunnerAsksRenewBetweenTurns: a Renew becomes the control
// socket's renew between turns with the command's note as its one
// payload and the evidence with the note's digest; the answer is
// Renewed, the receipts the ledger held were observed in order, and
// autorenew.json says what happened.
func TestAutorenewRunnerAsksRenewBetweenTurns(t *testing.T) {
	w := &policyWrapper{answer: delivered}
	const note = "# note\nkeep going\n"
	f := newRunnerFixture(t, w, autorenewOptions{HandoffCmd: "printf '# note\\nkeep going\\n'"},
		[]autorenew.Decision{renewAt70(false)}, map[string]any{"n": 1.0}, map[string]any{"n": 2.0})
	f.run(t)
	if len(w.renews) != 1 {
		t.Fatalf("renews %d, want 1", len(w.renews))
	}
	req := w.renews[0]
	if !req.BetweenTurns || req.Resume || req.Policy == nil || req.Reason != "policy: pressure 71.3 % ≥ 70 %" {
		t.Fatalf("request %+v", req)
	}
	if len(req.Payloads) != 1 || req.Payloads[0].Body == nil || *req.Payloads[0].Body != note || req.Payloads[0].PayloadKind != NoteKind || req.Payloads[0].ClientID != renewal.PolicyClientID {
		t.Fatalf("payloads %+v", req.Payloads)
	}
	ev := *req.Policy
	if ev.Client != renewal.PolicyClientID || ev.NoteSource != noteCommand || ev.NoteBytes != len(note) || ev.NoteDigest != contract.Digest([]byte(note)) || ev.TriggerPercent != 71.3 {
		t.Fatalf("evidence %+v", ev)
	}
	if got := f.policy.answered; len(got) != 1 || got[0] != autorenew.Renewed {
		t.Fatalf("answered %v", got)
	}
	if got := f.policy.observed; len(got) != 2 || got[0] != contract.EventFrameEnded {
		t.Fatalf("observed %v", got)
	}
	st := f.state(t)
	if st.LastResult != "renewed" || st.ThisHour != 1 || st.PerHour != 3 || st.Threshold != "70%" || st.Client != renewal.PolicyClientID || st.LastAt == nil || st.LastPercent != 71.3 {
		t.Fatalf("state %+v", st)
	}
	if !strings.Contains(f.out.String(), `"decision":"renew","result":"renewed"`) {
		t.Fatalf("printed %s", f.out)
	}
	if len(w.emits) != 0 {
		t.Fatalf("emits %v", w.emits)
	}
}

// TestAutorenewRunnerRefusalIsNotNow: the wrapper's not_between_turns
// refusal is NotNow, nothing recorded.
func TestAutorenewRunnerRefusalIsNotNow(t *testing.T) {
	w := &policyWrapper{answer: func() (any, error) {
		return nil, &control.Refusal{Code: control.CodeNotBetweenTurns, Message: "a key was typed since the turn ended"}
	}}
	f := newRunnerFixture(t, w, autorenewOptions{HandoffCmd: "echo note", Resume: true}, []autorenew.Decision{renewAt70(true)})
	f.run(t)
	if len(w.renews) != 1 || !w.renews[0].Resume {
		t.Fatalf("renews %+v", w.renews)
	}
	if got := f.policy.answered; len(got) != 1 || got[0] != autorenew.NotNow {
		t.Fatalf("answered %v", got)
	}
	if len(w.emits) != 0 || f.state(t).LastResult != "" {
		t.Fatalf("emits %v, state %+v", w.emits, f.state(t))
	}
	if out := f.out.String(); !strings.Contains(out, `"result":"not_now","detail":"a key was typed since the turn ended"`) || strings.Contains(out, "renewals_this_hour") {
		t.Fatalf("printed %s", out)
	}
}

// TestAutorenewRunnerLeaseBusy: no machine slot free is Busy and no
// renew asked.
func TestAutorenewRunnerLeaseBusy(t *testing.T) {
	w := &policyWrapper{answer: delivered}
	f := newRunnerFixture(t, w, autorenewOptions{HandoffCmd: "echo note"}, []autorenew.Decision{renewAt70(false), renewAt70(false), renewAt70(false)})
	f.runner.lease = fakeLease{free: false}
	f.run(t)
	if len(w.renews) != 0 {
		t.Fatalf("renews %+v", w.renews)
	}
	if got := f.policy.answered; len(got) != 3 || got[0] != autorenew.Busy || got[2] != autorenew.Busy {
		t.Fatalf("answered %v", got)
	}
	if st := f.state(t); st.ThisHour != 0 || st.LastResult != "" {
		t.Fatalf("a renewal not asked is not counted: %+v", st)
	}
	if n := strings.Count(f.out.String(), `"result":"busy"`); n != 1 {
		t.Fatalf("busy said %d times, want once:\n%s", n, f.out)
	}
}

// TestAutorenewRunnerFailedRenewal: a renewal that ends failed is
// Failed, and so is one the wrapper refuses for another reason.
func TestAutorenewRunnerFailedRenewal(t *testing.T) {
	for name, answer := range map[string]func() (any, error){
		"failed":  func() (any, error) { return renewal.Outcome{State: renewal.StateFailed}, nil },
		"refused": func() (any, error) { return nil, &control.Refusal{Code: "placement_unavailable", Message: "no"} },
	} {
		t.Run(name, func(t *testing.T) {
			w := &policyWrapper{answer: answer}
			f := newRunnerFixture(t, w, autorenewOptions{HandoffCmd: "echo note"}, []autorenew.Decision{renewAt70(false)})
			f.run(t)
			if got := f.policy.answered; len(got) != 1 || got[0] != autorenew.Failed {
				t.Fatalf("answered %v", got)
			}
			if why := f.policy.whys[0]; why != map[string]string{"failed": "the renewal ended failed", "refused": "no"}[name] {
				t.Fatalf("why %q", why)
			}
			if st := f.state(t); st.LastResult != "failed" {
				t.Fatalf("state %+v", st)
			}
		})
	}
}

// TestAutorenewRunnerHandoffFallback: a handoff command that fails is
// reported (capability.degraded, policy decision fallback) and the
// built-in note of the session's transcript goes with the renewal.
func TestAutorenewRunnerHandoffFallback(t *testing.T) {
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	line := `{"type":"user","message":{"role":"user","content":"fix the parser please"},"uuid":"u1","timestamp":"2026-11-21T22:12:16.835Z","sessionId":"s1"}` + "\n"
	if err := os.WriteFile(transcript, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	w := &policyWrapper{answer: delivered}
	f := newRunnerFixture(t, w, autorenewOptions{HandoffCmd: "echo broken >&2; exit 3"}, []autorenew.Decision{renewAt70(false)},
		map[string]any{"source": "transcript", "path": transcript})
	f.run(t)
	if len(w.emits) != 1 {
		t.Fatalf("emits %v", w.emits)
	}
	em := w.emits[0]
	pol, _ := em["telemetry_summary"].(map[string]any)["policy"].(map[string]any)
	if em["event"] != string(contract.EventCapabilityDegraded) || pol["decision"] != "fallback" || pol["reason"] != string(autorenew.ReasonHandoffFailed) || pol["note_source"] != noteBuiltinFallback || !strings.Contains(pol["detail"].(string), "exit status 3") {
		t.Fatalf("emit %v", em)
	}
	degs, _ := em["capability_degradations"].([]any)
	if len(degs) != 1 || degs[0].(map[string]any)["capability"] != "renewal.policy" || degs[0].(map[string]any)["current_support"] != "unavailable" {
		t.Fatalf("degradations %v", em["capability_degradations"])
	}
	if len(w.renews) != 1 || w.renews[0].Policy.NoteSource != noteBuiltinFallback || !strings.Contains(*w.renews[0].Payloads[0].Body, "fix the parser please") {
		t.Fatalf("renews %+v", w.renews)
	}
	if got := f.policy.answered; len(got) != 1 || got[0] != autorenew.Renewed {
		t.Fatalf("answered %v", got)
	}
}

// TestAutorenewRunnerNoNoteNoFreshRenewal: a fresh renewal without any
// note (the command failed, no transcript named) is not asked: the
// answer is Failed with why (the policy's refused report says it), and
// only the handoff command's failure is reported by the runner.
func TestAutorenewRunnerNoNoteNoFreshRenewal(t *testing.T) {
	w := &policyWrapper{answer: delivered}
	f := newRunnerFixture(t, w, autorenewOptions{HandoffCmd: "exit 3"}, []autorenew.Decision{renewAt70(false)})
	f.run(t)
	if len(w.renews) != 0 {
		t.Fatalf("renews %+v", w.renews)
	}
	var reasons []any
	for _, em := range w.emits {
		reasons = append(reasons, em["telemetry_summary"].(map[string]any)["policy"].(map[string]any)["reason"])
	}
	if len(reasons) != 1 || reasons[0] != string(autorenew.ReasonHandoffFailed) {
		t.Fatalf("reports %v (the refused one is the policy's)", reasons)
	}
	if got := f.policy.answered; len(got) != 1 || got[0] != autorenew.Failed {
		t.Fatalf("answered %v", got)
	}
	if why := f.policy.whys[0]; why != "no handoff note for a fresh renewal: no receipt names the harness's session file; not renewing" {
		t.Fatalf("why %q", why)
	}
}

// TestAutorenewRunnerRecord: a Record is emitted as capability.degraded
// with the report under telemetry_summary.policy, Reported follows, and
// autorenew.json says the policy gave up and why.
func TestAutorenewRunnerRecord(t *testing.T) {
	w := &policyWrapper{answer: delivered}
	rep := autorenew.Report{Reason: autorenew.ReasonFutile, Detail: "the new conversation started at 68 %", Evidence: renewal.Policy{ThresholdPercent: 70, ThisHour: 2, PerHour: 3}}
	f := newRunnerFixture(t, w, autorenewOptions{}, []autorenew.Decision{{Action: autorenew.Record, Report: rep}})
	f.policy.hour = 2
	f.run(t)
	if len(w.emits) != 1 || f.policy.reported != 1 {
		t.Fatalf("emits %v, reported %d", w.emits, f.policy.reported)
	}
	pol := w.emits[0]["telemetry_summary"].(map[string]any)["policy"].(map[string]any)
	if pol["decision"] != "gave_up" || pol["reason"] != "futile" || pol["client"] != renewal.PolicyClientID || pol["renewals_this_hour"] != 2.0 {
		t.Fatalf("policy %v", pol)
	}
	deg := w.emits[0]["capability_degradations"].([]any)[0].(map[string]any)
	if deg["evidence"] != rep.Detail || deg["retry_class"] != string(contract.RetryAfterReconfigure) {
		t.Fatalf("degradation %v", deg)
	}
	st := f.state(t)
	if st.GaveUp != autorenew.ReasonFutile || st.GaveUpDetail != rep.Detail || st.ThisHour != 2 {
		t.Fatalf("state %+v", st)
	}
}

// TestAutorenewRunnerNoLiveWrapper: a session whose wrapper is gone ends
// the runner without an answer.
func TestAutorenewRunnerNoLiveWrapper(t *testing.T) {
	f := newRunnerFixture(t, nil, autorenewOptions{HandoffCmd: "echo note"}, []autorenew.Decision{renewAt70(false), renewAt70(false)})
	f.run(t)
	if len(f.policy.answered) != 0 || len(f.policy.decisions) != 1 {
		t.Fatalf("answered %v, left %d", f.policy.answered, len(f.policy.decisions))
	}
}

// TestAutorenewRunnerFollowsAndWakes: a Wait with Until wakes the runner
// without a receipt, and a receipt appended while it waits is observed.
func TestAutorenewRunnerFollowsAndWakes(t *testing.T) {
	w := &policyWrapper{answer: delivered}
	f := newRunnerFixture(t, w, autorenewOptions{}, nil)
	f.policy.decisions = []autorenew.Decision{
		{Action: autorenew.Wait, Until: time.Now().Add(50 * time.Millisecond)},
		{Action: autorenew.Wait}, // only a receipt wakes it now
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		l, err := ledger.Open(statedir.ReceiptsPath(f.root, f.rec.ID), ledger.Options{})
		if err != nil {
			return
		}
		defer l.Close()
		_, _, _ = l.Append(contract.LifecycleReceipt{ClientID: "c", AdapterID: "claude", InvocationID: "inv", Event: contract.EventContextPressureObserved, EventID: "e", IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, TelemetrySummary: map[string]any{"percent": 75.0}})
	}()
	f.run(t)
	if got := f.policy.observed; len(got) != 1 || got[0] != contract.EventContextPressureObserved {
		t.Fatalf("observed %v", got)
	}
}

// TestAutorenewFlagDefaultsAreThePolicyDefaults: the defaults the flags
// show are the policy's.
func TestAutorenewFlagDefaultsAreThePolicyDefaults(t *testing.T) {
	d := autorenew.Defaults(autorenew.Threshold{Percent: 70})
	if d.Settle != defaultRenewSettle || d.FutileMargin != defaultRenewFutileMargin || d.PerHour != defaultRenewPerHour || d.WaitMax != defaultRenewWaitMax || d.Resume {
		t.Errorf("policy defaults %+v; the flags show settle %s, margin %d, per hour %d, wait %s", d, defaultRenewSettle, defaultRenewFutileMargin, defaultRenewPerHour, defaultRenewWaitMax)
	}
}

// TestAutorenewRunCompanion: run --renew-at starts lifeloop's own
// `autorenew --attached` for the session with its rules; nothing without
// --renew-at.
func TestAutorenewRunCompanion(t *testing.T) {
	c, err := runOptions{RenewAt: "60%", RenewPerHour: 5, RenewResume: true, HandoffCmd: "make note"}.companion("/state")
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	want := []string{exe, "autorenew", "--attached", "--state-dir", "/state", "--renew-at", "60%", "--per-hour", "5", "--resume", "--handoff-cmd", "make note", "--", "ses_A"}
	if got := c("ses_A"); !slices.Equal(got, want) {
		t.Errorf("companion %q, want %q", got, want)
	}
	if got := c("ses_B"); got[len(got)-1] != "ses_B" || len(got) != len(want) {
		t.Errorf("second session %q", got)
	}
	if c, err := (runOptions{RenewPerHour: defaultRenewPerHour}).companion("/state"); c != nil || err != nil {
		t.Errorf("without --renew-at: %v %v", c != nil, err)
	}
}

// panickyPolicy panics at its first decision.
type panickyPolicy struct{ scriptedPolicy }

func (*panickyPolicy) Next(time.Time) autorenew.Decision { panic("broken rule") }

// TestAutorenewRunnerPanicIsContained: a policy that panics ends its
// session's runner with an error naming the session, not the process.
func TestAutorenewRunnerPanicIsContained(t *testing.T) {
	f := newRunnerFixture(t, &policyWrapper{answer: delivered}, autorenewOptions{}, nil)
	f.runner.policy = &panickyPolicy{}
	err := f.runner.runGuarded(t.Context())
	if err == nil || !strings.Contains(err.Error(), "session ses_test: the renewal policy stopped: broken rule") {
		t.Fatalf("err %v", err)
	}
}

// TestAutorenewAllFindsRunningSessions: --all takes each running
// session once, leaves ended ones and those whose wrapper is gone, and
// looks again at a folder whose record is not written yet.
func TestAutorenewAllFindsRunningSessions(t *testing.T) {
	root := t.TempDir()
	write := func(id string, state statedir.SessionState) {
		t.Helper()
		if _, err := statedir.CreateSessionDir(root, id); err != nil {
			t.Fatal(err)
		}
		if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: state, AdapterID: "claude"}); err != nil {
			t.Fatal(err)
		}
	}
	write("ses_live", statedir.StateRunning)
	lock, err := statedir.HoldWrapper(root, "ses_live")
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	write("ses_done", statedir.StateCompleted)
	write("ses_lost", statedir.StateRunning)
	lost, err := statedir.HoldWrapper(root, "ses_lost")
	if err != nil {
		t.Fatal(err)
	}
	_ = lost.Close() // its wrapper died
	if _, err := statedir.CreateSessionDir(root, "ses_new"); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	ids := func(recs []statedir.SessionRecord) (out []string) {
		for _, r := range recs {
			out = append(out, r.ID)
		}
		return out
	}
	if got := ids(newRunningSessions(root, seen)); !slices.Equal(got, []string{"ses_live"}) {
		t.Fatalf("first look %v", got)
	}
	if got := newRunningSessions(root, seen); len(got) != 0 {
		t.Fatalf("second look %v", ids(got))
	}
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: "ses_new", State: statedir.StateRunning, AdapterID: "codex"}); err != nil {
		t.Fatal(err)
	}
	if got := ids(newRunningSessions(root, seen)); !slices.Equal(got, []string{"ses_new"}) {
		t.Fatalf("after a new session %v", got)
	}
}

// TestAutorenewStatusText: status's line of the policy's state.
func TestAutorenewStatusText(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	last := now.Add(-5 * time.Minute)
	for _, c := range []struct {
		st   autorenew.State
		want string
	}{
		{autorenew.State{Threshold: "70%", PerHour: 3, ThisHour: 1, Waiting: "pressure 71 % ≥ 70 %: waiting for the turn to end"}, "70 % · 1 of 3 this hour · pressure 71 % ≥ 70 %: waiting for the turn to end"},
		{autorenew.State{Threshold: "150000", PerHour: 5, ThisHour: 5, GaveUp: autorenew.ReasonSessionLimit, GaveUpDetail: "5 renewals this hour", Resume: true}, "150000 · 5 of 5 this hour · gave up (session_limit): 5 renewals this hour · resume"},
		{autorenew.State{Threshold: "60%", PerHour: 3, ThisHour: 1, LastAt: &last, LastPercent: 61.26, LastResult: "renewed"}, "60 % · 1 of 3 this hour · last renewal renewed at 61.3 %, 5m00s ago"},
		{autorenew.State{Threshold: "60%", PerHour: 3}, "60 % · 0 of 3 this hour · watching"},
	} {
		if got := autorenewText(c.st, now, painter{}); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
}
