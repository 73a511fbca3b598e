package seal

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startWrapped opens a new wrapped session, takes its wrapper lock and
// records events, as run does; release drops the lock as the wrapper's
// death would (and is called when the test ends).
func startWrapped(t *testing.T, root string, events ...contract.Event) (id string, release func()) {
	t.Helper()
	p, err := pipeline.Open(pipeline.Options{StateDir: root, NewSession: true, Adapter: builtin.Default().Resolve(nil), Mode: contract.ModeLauncherWrapper})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := statedir.HoldWrapper(root, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release = func() { once.Do(func() { _ = lock.Close() }) }
	t.Cleanup(release)
	for _, ev := range events {
		if _, err := p.Route(context.Background(), moment.Moment{Event: ev}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	return p.ID, release
}

// newSession records a running wrapped session with a session.starting
// and session.started and its session.json, holding its wrapper lock;
// release drops the lock as the wrapper's death would.
func newSession(t *testing.T, root string) (rec statedir.SessionRecord, release func()) {
	t.Helper()
	id, release := startWrapped(t, root, contract.EventSessionStarting, contract.EventSessionStarted)
	now := time.Now()
	rec = statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "generic",
		IntegrationMode: string(contract.ModeLauncherWrapper), StartedAt: &now, WrapperPid: 4242}
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	return rec, release
}

func ended(t *testing.T, root, id string) []contract.LifecycleReceipt {
	t.Helper()
	var out []contract.LifecycleReceipt
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Receipt.Event == contract.EventSessionEnded {
			out = append(out, e.Receipt)
		}
	}
	return out
}

func TestALiveWrapperIsNeverSealed(t *testing.T) {
	root := t.TempDir()
	rec, _ := newSession(t, root)
	got, err := Check(root, rec, Options{Registry: builtin.Default()})
	if err != nil || got.State != statedir.StateRunning || len(ended(t, root, rec.ID)) != 0 {
		t.Fatalf("a live session was touched: %v %s", err, got.State)
	}
}

func TestALostWrapperIsSealedExactlyOnceEvenWhenCommandsRace(t *testing.T) {
	root := t.TempDir()
	rec, release := newSession(t, root)
	release()

	var wg sync.WaitGroup
	results := make([]statedir.SessionRecord, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := Check(root, rec, Options{Registry: builtin.Default()})
			if err != nil {
				t.Error(err)
			}
			results[i] = got
		}()
	}
	wg.Wait()
	for _, r := range results {
		if r.State != statedir.StateLost || r.Exit == nil || r.Exit.Reason != ReasonWrapperLost {
			t.Fatalf("a racing sealer returned %+v", r)
		}
	}
	ends := ended(t, root, rec.ID)
	if len(ends) != 1 {
		t.Fatalf("%d session.ended after 8 racing sealers, want 1", len(ends))
	}
	e := ends[0]
	if e.TelemetrySummary[contract.SummaryReason] != ReasonWrapperLost || e.TelemetrySummary[contract.SummaryOutcome] != "unknown" ||
		e.ParentReceiptID == nil || len(e.Warnings) == 0 || e.Warnings[0].Code != ReasonWrapperLost {
		t.Fatalf("sealing receipt: %+v", e)
	}
	if rep, err := ledger.Verify(statedir.ReceiptsPath(root, rec.ID)); err != nil || !rep.OK {
		t.Fatalf("sealed ledger does not verify: %+v %v", rep, err)
	}
	back, err := statedir.ReadSession(root, rec.ID)
	if err != nil || back.State != statedir.StateLost {
		t.Fatalf("session.json after sealing: %s %v", back.State, err)
	}
	// A later look changes nothing.
	if again, err := Check(root, back, Options{Registry: builtin.Default()}); err != nil || again.State != statedir.StateLost || len(ended(t, root, rec.ID)) != 1 {
		t.Fatalf("second look: %s %v", again.State, err)
	}
}

func TestARecordedEndOnlyFixesSessionJSON(t *testing.T) {
	root := t.TempDir()
	rec, release := newSession(t, root)
	p, err := pipeline.Open(pipeline.Options{StateDir: root, Session: rec.ID, Adapter: builtin.Default().Resolve(nil), Mode: contract.ModeLauncherWrapper})
	if err != nil {
		t.Fatal(err)
	}
	sum := contract.SessionEndedSummary(contract.ExitClass{Phase: contract.PhaseCompleted, Outcome: contract.LifecycleSuccess, Reason: "exit_code_0"},
		contract.ExitFacts{}, time.Time{}, time.Now(), "")
	if _, err := p.Route(context.Background(), moment.Moment{Event: contract.EventSessionEnded, Summary: sum}); err != nil {
		t.Fatal(err)
	}
	p.Close()
	release() // died after session.ended, before session.json said so
	got, err := Check(root, rec, Options{Registry: builtin.Default()})
	if err != nil || got.State != statedir.StateCompleted || len(ended(t, root, rec.ID)) != 1 {
		t.Fatalf("got %s %v, %d session.ended", got.State, err, len(ended(t, root, rec.ID)))
	}
}

func TestASessionNoWrapperHeldIsLeftAlone(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	rec := statedir.SessionRecord{ID: "manual1", State: statedir.StateRunning, StartedAt: &now}
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	got, err := Check(root, rec, Options{Registry: builtin.Default()})
	if err != nil || got.State != statedir.StateRunning {
		t.Fatalf("an emit-only session was sealed: %s %v", got.State, err)
	}
}

func TestOrphansFollowTheHarnessGroupAndNotAReusedPid(t *testing.T) {
	cmd := exec.CommandContext(t.Context(), "sh", "-c", "sleep 30 & wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	st, err := procfs.Stat(pid)
	if err != nil {
		t.Fatal(err)
	}
	rec := statedir.SessionRecord{Pid: pid, PidStartTicks: st.StartTicks}
	deadline := time.Now().Add(5 * time.Second)
	var got []int
	for len(got) < 2 && time.Now().Before(deadline) {
		got = Orphans(rec)
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 2 || !slices.Contains(got, pid) {
		t.Fatalf("Orphans = %v, want the shell %d and its sleep", got, pid)
	}
	rec.PidStartTicks++
	if got := Orphans(rec); got != nil {
		t.Fatalf("a pid with another start time was taken for the harness: %v", got)
	}
}

func TestAWrapperThatDiedBeforeItsFirstRecordIsFoundAndSealed(t *testing.T) {
	root := t.TempDir()
	reg := builtin.Default()
	id, release := startWrapped(t, root, contract.EventSessionStarting)
	if got, err := Unlisted(root, Options{Registry: reg}); err != nil || len(got) != 0 {
		t.Fatalf("a starting session was sealed: %v %v", got, err)
	}
	release()
	got, err := Unlisted(root, Options{Registry: reg})
	if err != nil || len(got) != 1 || got[0].State != statedir.StateLost {
		t.Fatalf("Unlisted = %+v, %v", got, err)
	}
	ends := ended(t, root, id)
	if len(ends) != 1 || ends[0].Status != contract.StatusFailed {
		t.Fatalf("the launch that never started must end failed: %+v", ends)
	}
	if recs, _ := statedir.ListSessions(root); len(recs) != 1 {
		t.Fatalf("the sealed session is not listed: %+v", recs)
	}
	if again, _ := Unlisted(root, Options{Registry: reg}); len(again) != 0 || len(ended(t, root, id)) != 1 {
		t.Fatal("a second look sealed again")
	}
}

// TestAWrapperThatDiedBeforeAnyReceiptTellsAWholeStory: a wrapper killed
// after opening its session's ledger and before its session.starting is
// sealed with a session.starting and a failed session.ended linked to it,
// never a lone session.ended; a second look adds nothing.
func TestAWrapperThatDiedBeforeAnyReceiptTellsAWholeStory(t *testing.T) {
	root := t.TempDir()
	reg := builtin.Default()
	id, release := startWrapped(t, root)
	release()
	if got, err := Unlisted(root, Options{Registry: reg}); err != nil || len(got) != 1 || got[0].State != statedir.StateLost {
		t.Fatalf("Unlisted = %+v, %v", got, err)
	}
	story := func() []contract.LifecycleReceipt {
		var rs []contract.LifecycleReceipt
		for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, e.Receipt)
		}
		return rs
	}
	rs := story()
	if len(rs) != 2 || rs[0].Event != contract.EventSessionStarting || rs[1].Event != contract.EventSessionEnded {
		t.Fatalf("sealed story %+v, want session.starting then session.ended", rs)
	}
	if rs[1].Status != contract.StatusFailed || rs[1].ParentReceiptID == nil || *rs[1].ParentReceiptID != rs[0].ReceiptID {
		t.Fatalf("session.ended %+v: want failed, linked to the session.starting", rs[1])
	}
	if again, _ := Unlisted(root, Options{Registry: reg}); len(again) != 0 || len(story()) != 2 {
		t.Fatal("a second look sealed again")
	}
}

func TestATornSessionRecordIsRebuiltFromTheLedger(t *testing.T) {
	root := t.TempDir()
	rec, release := newSession(t, root)
	release()
	// A power loss after an unsynced replace: an empty session.json.
	if err := os.WriteFile(statedir.SessionPath(root, rec.ID), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := Unlisted(root, Options{Registry: builtin.Default()})
	if err != nil || len(got) != 1 || got[0].State != statedir.StateLost || got[0].AdapterID == "" {
		t.Fatalf("Unlisted = %+v, %v", got, err)
	}
	if back, err := statedir.ReadSession(root, rec.ID); err != nil || back.State != statedir.StateLost {
		t.Fatalf("session.json after rebuilding: %+v %v", back, err)
	}
}

// TestARecordOfANewerLifeloopIsNotRebuilt: a session.json with a field
// this lifeloop does not know is whole, not torn; Unlisted leaves it as
// it is rather than rebuilding it from the ledger over what it records.
func TestARecordOfANewerLifeloopIsNotRebuilt(t *testing.T) {
	root := t.TempDir()
	rec, release := newSession(t, root)
	release()
	path := statedir.SessionPath(root, rec.ID)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	newer := append([]byte(`{"from_a_newer_lifeloop": true,`), data[1:]...)
	if err := os.WriteFile(path, newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := Unlisted(root, Options{Registry: builtin.Default()}); err != nil || len(got) != 0 {
		t.Fatalf("Unlisted = %+v, %v; want nothing sealed", got, err)
	}
	if back, err := os.ReadFile(path); err != nil || string(back) != string(newer) {
		t.Fatalf("session.json was rewritten: %s (%v)", back, err)
	}
}

// TestUnlistedSaysWhyItCannotLook: no sessions folder is nothing to seal;
// one that cannot be read is an error, not silence.
func TestUnlistedSaysWhyItCannotLook(t *testing.T) {
	root := t.TempDir()
	if got, err := Unlisted(root, Options{}); err != nil || got != nil {
		t.Fatalf("no sessions folder: %+v, %v", got, err)
	}
	if err := os.WriteFile(statedir.SessionsDir(root), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Unlisted(root, Options{}); err == nil {
		t.Fatal("a sessions folder that cannot be read was taken for none")
	}
}

// TestSealingRunsTimeForward: a session whose recorded start is later
// than its last receipt (receipt times are whole seconds; a clock may
// step back) is sealed with ended_at ≥ started_at and a duration ≥ 0.
func TestSealingRunsTimeForward(t *testing.T) {
	root := t.TempDir()
	rec, release := newSession(t, root)
	later := time.Now().Add(time.Hour + 900*time.Millisecond)
	rec.StartedAt = &later
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	release()
	got, err := Check(root, rec, Options{Registry: builtin.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if got.EndedAt == nil || got.EndedAt.Before(later.Truncate(time.Second)) {
		t.Fatalf("ended at %v, started at %v", got.EndedAt, later)
	}
	ends := ended(t, root, rec.ID)
	if len(ends) != 1 {
		t.Fatalf("%d session.ended", len(ends))
	}
	sum := ends[0].TelemetrySummary
	start, _ := time.Parse(time.RFC3339, sum[contract.SummaryStartedAt].(string))
	end, _ := time.Parse(time.RFC3339, sum[contract.SummaryEndedAt].(string))
	if d, _ := sum[contract.SummaryDurationS].(float64); d < 0 || end.Before(start) {
		t.Fatalf("summary %v", sum)
	}
}
