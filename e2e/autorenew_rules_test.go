package e2e

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// The renewal policy's rules on a real Claude Code TUI (the cheapest of
// the six): it waits for the turn to end, never throws a draft away,
// stops a futile loop, and keeps its limits across sessions.

// waitNoRenewal waits d and fails when the session's ledger shows a
// renewal by then.
func waitNoRenewal(t *testing.T, state, ses string, d time.Duration, why string) {
	t.Helper()
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if _, rs := onlySession(t, state); len(renewalReceipts(rs)) > 0 {
			t.Fatalf("renewed %s: events %v\n%s", why, eventsOf(rs), policyLog(state, ses))
		}
	}
}

// TestAutorenewWaitsForTheTurnToEnd: the first answer of a turn (a tool
// call) fills 80 % of the window, and the mock holds the turn's next
// request (the tool's result): the frame stays open and the policy does
// not renew, for longer than the settle; once the mock answers and the
// frame ends, it renews, after that frame.ended.
func TestAutorenewWaitsForTheTurnToEnd(t *testing.T) {
	skipShort(t)
	h := autoTUIs["claude"]
	const hold = "AR-HOLD-8c2e"
	mock := startMock(t, mockmodel.Config{
		ToolCommand: "echo " + hold, HoldTrigger: hold,
		UsageSequence: []mockmodel.Usage{h.usage(80), h.usage(80)}, Usage: h.usage(15),
	})
	env := h.env(t, mock)
	state := stateDir(t)
	term := startAutoTUI(t, h, env, state, "--renew-at", autorenewAt)
	h.prompt(t, term, "please "+mockmodel.DefaultToolTrigger+" now")
	testharness.WaitReceipts(t, term, state, "context.pressure_observed", 1, runTimeout)
	ses, _ := onlySession(t, state)
	waitSession(t, term, state, ses, "pressure at 80 %", func(rs []map[string]any) bool {
		return num(dig(lastOf(rs, "context.pressure_observed"), "telemetry_summary", "percent")) >= 70
	})
	for deadline := time.Now().Add(screenTimeout); mock.Held() == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the tool result's request never reached the mock; screen:\n%s", tailText(testharness.StripANSI(term.Output()), 3000))
		}
	}
	waitNoRenewal(t, state, ses, autorenewSettle+5*time.Second, "while the frame was open")
	if _, rs := onlySession(t, state); countFrames(rs) != 0 {
		t.Fatalf("the held turn ended: %v", eventsOf(rs))
	}
	mock.Release()
	rs := waitSession(t, term, state, ses, "policy renewal after the turn", func(rs []map[string]any) bool { return renewalsStarted(rs) >= 1 })
	assertPolicyRenewals(t, rs, 1)
	endSafeTUI(t, env, term)
}

// TestAutorenewKeepsADraft: right after a turn that filled 80 % of the
// window ends, the person types a few characters without Enter; the
// policy does not renew (settle + 5 s), the draft is still there and,
// sent, reaches the model; that turn (80 % too) ends and nothing is typed
// after it: then the policy renews, after that frame.ended.
func TestAutorenewKeepsADraft(t *testing.T) {
	skipShort(t)
	h := autoTUIs["claude"]
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{h.usage(80), h.usage(80)}, Usage: h.usage(15)})
	env := h.env(t, mock)
	state := stateDir(t)
	term := startAutoTUI(t, h, env, state, "--renew-at", autorenewAt)
	h.prompt(t, term, "first prompt 2b9e")
	testharness.WaitReceipts(t, term, state, "frame.ended", 1, runTimeout)
	const draft = "draft 6d0b"
	at := len(term.Output())
	term.Type(draft)
	if err := term.WaitForAfter(at, draft, screenTimeout); err != nil {
		t.Fatal(err)
	}
	ses, _ := onlySession(t, state)
	waitNoRenewal(t, state, ses, autorenewSettle+5*time.Second, "after keys were typed")
	n := len(mock.RequestsOfKind(h.kind))
	h.send(term)
	waitRequest(t, term, mock, h.kind, n, draft)
	rs := waitSession(t, term, state, ses, "policy renewal after the draft's turn", func(rs []map[string]any) bool { return renewalsStarted(rs) >= 1 })
	assertPolicyRenewals(t, rs, 1)
	if ending, sent := indexOf(rs, 0, isRenewalStep("ending")), indexOf(rs, 0, isEvent("frame.ended")); countFrames(rs[:max(ending, 0)]) < 2 {
		t.Errorf("the renewal (receipt %d) came before the draft's turn ended (first frame.ended at %d): %v", ending, sent, eventsOf(rs))
	}
	endSafeTUI(t, env, term)
}

// TestAutorenewFutileGuard: the mock reports 80 % on every answer, the
// new conversation's first included: the policy renews once, then sees
// the new conversation start within its margin of the threshold, records
// one capability.degraded (policy gave_up, futile) and renews no more.
func TestAutorenewFutileGuard(t *testing.T) {
	skipShort(t)
	h := autoTUIs["claude"]
	mock := startMock(t, mockmodel.Config{Usage: h.usage(80)})
	env := h.env(t, mock)
	state := stateDir(t)
	term := startAutoTUI(t, h, env, state, "--renew-at", autorenewAt)
	h.prompt(t, term, "first prompt 0c4a")
	testharness.WaitReceipts(t, term, state, "frame.ended", 1, runTimeout)
	ses, _ := onlySession(t, state)
	before := len(term.Output())
	waitSession(t, term, state, ses, "policy renewal", func(rs []map[string]any) bool { return renewalsStarted(rs) >= 1 })
	h.relaunched(t, term, before)
	h.prompt(t, term, "second prompt 5f2d")
	rs := waitSession(t, term, state, ses, "futile report", func(rs []map[string]any) bool { return len(policyReports(rs)) >= 1 })
	time.Sleep(autorenewSettle + 5*time.Second)
	_, rs = onlySession(t, state)
	assertPolicyRenewals(t, rs, 1)
	reps := policyReports(rs)
	if len(reps) != 1 || dig(reps[0], "telemetry_summary", "policy", "decision") != "gave_up" || dig(reps[0], "telemetry_summary", "policy", "reason") != string(autorenew.ReasonFutile) {
		t.Errorf("policy reports %s, want one gave_up futile", toJSON(reps))
	}
	if last := indexOf(rs, 0, isRenewalStep("started")); indexOf(rs, 0, isEvent("capability.degraded")) < last {
		t.Errorf("a capability.degraded before the renewal ended: %v", eventsOf(rs))
	}
	if st, err := autorenew.ReadState(autorenew.StatePath(filepath.Join(state, "sessions", ses))); err != nil || st.GaveUp != autorenew.ReasonFutile {
		t.Errorf("autorenew.json %+v (%v), want gave_up futile", st, err)
	}
	endSafeTUI(t, env, term)
}

// limitSession is one Claude session of TestAutorenewLimits.
type limitSession struct {
	id   string
	env  *testharness.HarnessEnv
	mock *mockmodel.Server
	term *testharness.Terminal
	// before is the terminal's output length before its first prompt.
	before int
}

// TestAutorenewLimits: three Claude sessions (plain `lifeloop run`) and
// one `lifeloop autorenew --all --at-once 1 --per-hour 1` for the state
// folder. All three cross 70 % at once; each is renewed exactly once, and
// never two at the same time (their renewal.json spans do not overlap).
// The first session then crosses again (a low turn, then a high one):
// no second renewal there, one capability.degraded session_limit report.
func TestAutorenewLimits(t *testing.T) {
	skipShort(t)
	h := autoTUIs["claude"]
	ll := lifeloopBin(t)
	state := stateDir(t)
	high, low := h.usage(80), h.usage(15)
	var ss []*limitSession
	for i := range 3 {
		seq := []mockmodel.Usage{high}
		if i == 0 {
			seq = []mockmodel.Usage{high, low, high}
		}
		s := &limitSession{mock: startMock(t, mockmodel.Config{UsageSequence: seq, Usage: low})}
		s.env = h.env(t, s.mock)
		s.term = startAutoTUI(t, h, s.env, state)
		testharness.WaitReceipts(t, s.term, state, "session.started", i+1, runTimeout)
		for id := range sessionLedgers(t, state) {
			if !slicesContainsID(ss, id) {
				s.id = id
			}
		}
		ss = append(ss, s)
	}
	logPath := filepath.Join(t.TempDir(), "autorenew.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	client := ss[0].env.Command(ll, "autorenew", "--all", "--state-dir", state, "--renew-at", autorenewAt, "--at-once", "1", "--per-hour", "1")
	client.Stdout, client.Stderr = logFile, logFile
	if err := client.Start(); err != nil {
		t.Fatal(err)
	}
	stopClient := func() {
		if client.ProcessState == nil {
			_ = client.Process.Signal(syscall.SIGTERM)
			_ = client.Wait()
		}
	}
	t.Cleanup(func() {
		stopClient()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("lifeloop autorenew --all output:\n%s", b)
		}
	})
	for i, s := range ss {
		s.before = len(s.term.Output())
		h.prompt(t, s.term, "first prompt of session "+string(rune('a'+i)))
	}
	type span struct {
		id          string
		start, done time.Time
	}
	var spans []span
	for _, s := range ss {
		rs := waitSession(t, s.term, state, s.id, "policy renewal", func(rs []map[string]any) bool { return renewalsStarted(rs) >= 1 })
		assertPolicyRenewals(t, rs, 1)
		st, err := renewal.ReadStatus(renewal.StatusPath(filepath.Join(state, "sessions", s.id)))
		if err != nil || st.StartedAt == nil || st.FinishedAt == nil {
			t.Fatalf("session %s renewal.json %+v (%v)", s.id, st, err)
		}
		spans = append(spans, span{s.id, *st.StartedAt, *st.FinishedAt})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	for i := 1; i < len(spans); i++ {
		if spans[i].start.Before(spans[i-1].done) {
			t.Errorf("two renewals at once: %s %s–%s and %s %s–%s", spans[i-1].id, spans[i-1].start.Format(time.StampMilli), spans[i-1].done.Format(time.StampMilli),
				spans[i].id, spans[i].start.Format(time.StampMilli), spans[i].done.Format(time.StampMilli))
		}
	}
	for _, sp := range spans {
		t.Logf("renewal of %s: %s – %s", sp.id, sp.start.Format(time.StampMilli), sp.done.Format(time.StampMilli))
	}

	first := ss[0]
	h.relaunched(t, first.term, first.before)
	h.prompt(t, first.term, "second prompt 71aa")
	waitSession(t, first.term, state, first.id, "the low turn's frame.ended", func(rs []map[string]any) bool { return countFrames(rs) >= 2 })
	h.prompt(t, first.term, "third prompt 71ab")
	waitSession(t, first.term, state, first.id, "session_limit report", func(rs []map[string]any) bool { return len(policyReports(rs)) >= 1 })
	time.Sleep(autorenewSettle + 3*time.Second)
	rs := readJSONL(t, filepath.Join(state, "sessions", first.id, "receipts.jsonl"))
	assertPolicyRenewals(t, rs, 1)
	reps := policyReports(rs)
	if len(reps) != 1 || dig(reps[0], "telemetry_summary", "policy", "reason") != string(autorenew.ReasonSessionLimit) ||
		num(dig(reps[0], "telemetry_summary", "policy", "per_hour")) != 1 {
		t.Errorf("policy reports %s, want one session_limit (per hour 1)", toJSON(reps))
	}
	// --all keeps following the state folder (a new session would be
	// followed too): it ends by its stop signal.
	stopClient()
	for _, s := range ss {
		endSafeTUI(t, s.env, s.term)
	}
	if out, _ := os.ReadFile(logPath); strings.Contains(string(out), "panic") {
		t.Errorf("lifeloop autorenew --all panicked:\n%s", out)
	}
}

func slicesContainsID(ss []*limitSession, id string) bool {
	for _, s := range ss {
		if s.id == id {
			return true
		}
	}
	return false
}

// TestAutorenewBetweenLevels: the threshold (70 %) lies between two
// pressure levels (moderate from 50 %, high from 75 %). A first turn at
// 60 % renews nothing; a second at 72 % crosses the threshold without
// changing the level, and the policy renews after that turn, with the
// 72 % reading as its trigger.
func TestAutorenewBetweenLevels(t *testing.T) {
	skipShort(t)
	h := autoTUIs["claude"]
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{h.usage(60), h.usage(72)}, Usage: h.usage(15)})
	env := h.env(t, mock)
	state := stateDir(t)
	term := startAutoTUI(t, h, env, state, "--renew-at", autorenewAt)
	h.prompt(t, term, "first prompt 9e41")
	testharness.WaitReceipts(t, term, state, "frame.ended", 1, runTimeout)
	ses, _ := onlySession(t, state)
	waitNoRenewal(t, state, ses, autorenewSettle+3*time.Second, "at 60 %")
	h.prompt(t, term, "second prompt 9e42")
	testharness.WaitReceipts(t, term, state, "frame.ended", 2, runTimeout)
	rs := waitSession(t, term, state, ses, "policy renewal after the turn at 72 %", func(rs []map[string]any) bool { return renewalsStarted(rs) >= 1 })
	assertPolicyRenewals(t, rs, 1)
	if p := dig(renewalReceipts(rs)[0], "telemetry_summary", "policy", "trigger_percent"); num(p) != 72 {
		t.Errorf("trigger_percent %v, want 72", p)
	}
	endSafeTUI(t, env, term)
}
