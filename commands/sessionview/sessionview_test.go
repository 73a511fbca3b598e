package sessionview

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// writeSession lays out a session folder under a temp state root from
// testdata/<name>.jsonl and returns the root and the record.
func writeSession(t *testing.T, ledgerFile string, st *renewal.Status) (string, statedir.SessionRecord) {
	t.Helper()
	root := t.TempDir()
	started := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	rec := statedir.SessionRecord{
		ID: "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F", State: "running", AdapterID: "codex",
		IntegrationMode: "launcher_wrapper", Argv: []string{"codex"}, Cwd: "/work/app", Pid: 4242,
		StartedAt: &started, UpdatedAt: started,
	}
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join("testdata", ledgerFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statedir.ReceiptsPath(root, rec.ID), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if st != nil {
		if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(root, rec.ID)), *st); err != nil {
			t.Fatal(err)
		}
	}
	return root, rec
}

func TestLoad(t *testing.T) {
	root, rec := writeSession(t, "turns.jsonl", &renewal.Status{State: renewal.StatePendingDelivery, PayloadPending: true, PayloadIDs: []string{"pay_1"}})
	s, err := Load(root, rec)
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != rec.ID || s.Harness != "codex" || s.State != "running" || s.Cwd != "/work/app" || s.Pid != 4242 {
		t.Errorf("record fields: %+v", s)
	}
	if s.Receipts != 9 || s.LastSequence != 9 {
		t.Errorf("receipts %d, last sequence %d; want 9, 9", s.Receipts, s.LastSequence)
	}
	if s.Frames != 2 {
		t.Errorf("frames %d, want 2 (t1 and t2)", s.Frames)
	}
	if s.LastFrame == nil || s.LastFrame.ID != "t2" || s.LastFrame.Event != "frame.opened" {
		t.Errorf("last frame %+v, want t2 frame.opened", s.LastFrame)
	}
	if p := s.Pressure; p == nil || p.Level != "high" || p.Percent != 80.5 || p.Tokens != 80500 || p.Window != 100000 {
		t.Errorf("pressure %+v, want high 80.5%% 80500/100000", s.Pressure)
	}
	if s.LastEvent == nil || s.LastEvent.Event != "supervisor.tick" || s.LastEvent.Sequence != 9 {
		t.Errorf("last event %+v", s.LastEvent)
	}
	if s.Renewal == nil || !s.Renewal.Pending || s.Renewal.State != "pending_delivery" {
		t.Errorf("renewal %+v, want pending_delivery, pending", s.Renewal)
	}
	now := time.Date(2026, 11, 22, 1, 30, 0, 0, time.UTC)
	if d := s.Duration(now); d != 30*time.Minute {
		t.Errorf("duration %v, want 30m (running: until now)", d)
	}
}

// A line that is not a receipt is skipped; a replayed sequence is not
// counted twice; an unknown state is kept as written.
func TestApplyTolerates(t *testing.T) {
	root, rec := writeSession(t, "turns.jsonl", nil)
	rec.State = "lost"
	f, err := os.OpenFile(statedir.ReceiptsPath(root, rec.ID), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("garbage\n")
	f.Close()
	s, err := Load(root, rec)
	if err != nil {
		t.Fatal(err)
	}
	if s.State != "lost" || s.Receipts != 9 || s.Renewal != nil {
		t.Errorf("state %q receipts %d renewal %+v", s.State, s.Receipts, s.Renewal)
	}
	// Replays of an already folded sequence change nothing.
	before := s.Receipts
	for e, err := range ledgerEntries(t, root, rec.ID) {
		if err == nil {
			s.Apply(e)
		}
	}
	if s.Receipts != before || s.Frames != 2 {
		t.Errorf("after replay: receipts %d frames %d", s.Receipts, s.Frames)
	}
}

func TestDurationEnded(t *testing.T) {
	start := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	end := start.Add(90 * time.Second)
	s := Summary{Started: &start, Ended: &end, Terminal: true}
	if d := s.Duration(start.Add(time.Hour)); d != 90*time.Second {
		t.Errorf("duration %v, want 1m30s", d)
	}
	if d := (&Summary{}).Duration(start); d != 0 {
		t.Errorf("unknown start: %v", d)
	}
}

func TestShort(t *testing.T) {
	for in, want := range map[string]string{
		"ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F": "ses_2C3D4E5F",
		"ses_A":                          "ses_A",
		"a-very-long-hand-made-session":  "a-very-long-hand",
	} {
		if got := Short(in); got != want {
			t.Errorf("Short(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFreshRenewalForgetsPressure: a renewal's fresh relaunch
// (session.starting with context_reset) forgets the old conversation's
// pressure; a resumed one keeps it; the new conversation's first reading
// is shown.
func TestFreshRenewalForgetsPressure(t *testing.T) {
	var s Summary
	seq := uint64(0)
	apply := func(ev contract.Event, sum map[string]any) {
		seq++
		n := seq
		s.Apply(contract.LifecycleReceipt{Event: ev, Sequence: &n, TelemetrySummary: sum})
	}
	apply(contract.EventContextPressureObserved, map[string]any{"level": "moderate", "tokens": 120000.0, "window": 200000.0, "percent": 60.0})
	apply(contract.EventSessionStarting, map[string]any{"reason": "renewal", "resume": true})
	if s.Pressure == nil || s.Pressure.Level != "moderate" {
		t.Fatalf("a resumed relaunch lost the pressure: %+v", s.Pressure)
	}
	apply(contract.EventSessionStarting, map[string]any{"reason": "renewal", "resume": false, "context_reset": true})
	if s.Pressure != nil {
		t.Fatalf("a fresh relaunch kept the old conversation's pressure: %+v", s.Pressure)
	}
	apply(contract.EventContextPressureObserved, map[string]any{"level": "low", "tokens": 30000.0, "window": 200000.0, "percent": 15.0})
	if p := s.Pressure; p == nil || p.Level != "low" || p.Percent != 15 {
		t.Errorf("the new conversation's pressure: %+v", p)
	}
}

// TestSwitchNamesTheCurrentHarnessSession: after the harness switched to
// a new harness session inside its process, the summary names the new
// one, the old conversation's pressure is gone, and the session is not
// over (its session.ended closed only the old harness session).
func TestSwitchNamesTheCurrentHarnessSession(t *testing.T) {
	var s Summary
	seq := uint64(0)
	apply := func(ev contract.Event, hs string, sum map[string]any) {
		seq++
		n := seq
		s.Apply(contract.LifecycleReceipt{Event: ev, Sequence: &n, HarnessSessionID: &hs, TelemetrySummary: sum})
	}
	sw := map[string]any{"reason": contract.HarnessSessionSwitched, contract.SummarySwitch: 1.0}
	apply(contract.EventSessionStarted, "A", nil)
	apply(contract.EventContextPressureObserved, "A", map[string]any{"level": "moderate", "tokens": 120000.0, "window": 200000.0, "percent": 60.0})
	apply(contract.EventSessionEnded, "A", sw)
	apply(contract.EventSessionStarting, "B", sw)
	apply(contract.EventSessionStarted, "B", sw)
	if s.HarnessSession != "B" || s.Pressure != nil || s.Exit != nil || s.Terminal {
		t.Errorf("after the switch: session %q, pressure %+v, exit %+v, terminal %v", s.HarnessSession, s.Pressure, s.Exit, s.Terminal)
	}
}
