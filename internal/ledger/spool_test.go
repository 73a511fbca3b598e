package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// diskFull makes every write of l fail with ENOSPC while it is on.
func diskFull(l *Ledger) *atomic.Bool { return storageFails(l, unix.ENOSPC) }

// storageFails makes every write of l fail with errno while it is on.
func storageFails(l *Ledger, errno unix.Errno) *atomic.Bool {
	var on atomic.Bool
	l.mu.Lock()
	l.fault = func() error {
		if on.Load() {
			return fmt.Errorf("write: %w", errno)
		}
		return nil
	}
	l.mu.Unlock()
	return &on
}

// TestEveryStorageFaultIsHeld: quota, I/O errors, a read-only file system
// and a too-large file take the same path as a full disk.
func TestEveryStorageFaultIsHeld(t *testing.T) {
	for _, errno := range []unix.Errno{unix.EDQUOT, unix.EIO, unix.EROFS, unix.EFBIG} {
		t.Run(errno.Error(), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "receipts.jsonl")
			l := openTest(t, path)
			fail := storageFails(l, errno)
			fail.Store(true)
			if _, res := mustAppend(t, l, testReceipt(contract.EventSessionStarted), AppendOptions{}); res.Outcome != Spooled || !errors.Is(res.Fault, errno) {
				t.Fatalf("outcome %s fault %v", res.Outcome, res.Fault)
			}
			fail.Store(false)
			mustAppend(t, l, testReceipt(contract.EventSessionEnded), AppendOptions{})
			entries := assertGapless(t, path)
			if len(entries) != 3 || !strings.Contains(*entries[1].Receipt.CapabilityDegradations[0].Evidence, errno.Error()) {
				t.Fatalf("after %v: %v", errno, events(entries))
			}
		})
	}
	// A bad receipt is refused as before, outage or not.
	l := openTest(t, filepath.Join(t.TempDir(), "receipts.jsonl"))
	diskFull(l).Store(true)
	bad := testReceipt(contract.EventSessionStarted)
	bad.Status = "bogus"
	if _, _, err := l.AppendWith(bad, AppendOptions{}); err == nil {
		t.Fatal("an invalid receipt was held instead of refused")
	}
}

func events(entries []Entry) []contract.Event {
	var out []contract.Event
	for _, e := range entries {
		out = append(out, e.Receipt.Event)
	}
	return out
}

func assertGapless(t *testing.T, path string) []Entry {
	t.Helper()
	rep, err := Verify(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		t.Fatalf("ledger does not verify: %+v", rep)
	}
	entries := readAll(t, path, 0)
	for i, e := range entries {
		if *e.Receipt.Sequence != uint64(i+1) {
			t.Fatalf("entry %d has sequence %d", i, *e.Receipt.Sequence)
		}
	}
	return entries
}

func TestSpoolHoldsReceiptsWhileTheDiskIsFullAndWritesThemInOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	full := diskFull(l)
	mustAppend(t, l, testReceipt(contract.EventSessionStarted), AppendOptions{})

	full.Store(true)
	held := []contract.Event{contract.EventFrameOpening, contract.EventSupervisorTick, contract.EventContextPressureObserved, contract.EventSupervisorTick, contract.EventFrameEnded}
	var ids []string
	for _, ev := range held {
		got, res := mustAppend(t, l, testReceipt(ev), AppendOptions{})
		if res.Outcome != Spooled || got.Sequence != nil || got.ReceiptID == "" {
			t.Fatalf("%s during the outage: outcome %s sequence %v id %q", ev, res.Outcome, got.Sequence, got.ReceiptID)
		}
		ids = append(ids, got.ReceiptID)
	}
	// The first tick was replaced by the second; nothing is lost yet.
	if n, cause := l.Unrecorded(); n != 4 || !errors.Is(cause, unix.ENOSPC) {
		t.Fatalf("Unrecorded = %d, %v; want 4 waiting, ENOSPC", n, cause)
	}
	if got := len(readAll(t, path, 0)); got != 1 {
		t.Fatalf("ledger holds %d receipts during the outage, want 1", got)
	}

	full.Store(false)
	_, res := mustAppend(t, l, testReceipt(contract.EventSessionEnded), AppendOptions{})
	if res.Outcome != Appended {
		t.Fatalf("after the outage: outcome %s", res.Outcome)
	}
	entries := assertGapless(t, path)
	want := []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening, contract.EventContextPressureObserved,
		contract.EventSupervisorTick, contract.EventFrameEnded, contract.EventCapabilityDegraded, contract.EventSessionEnded}
	if got := events(entries); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger events\n got %v\nwant %v", got, want)
	}
	if entries[1].Receipt.ReceiptID != ids[0] {
		t.Fatalf("a held receipt changed its id: %s, was %s", entries[1].Receipt.ReceiptID, ids[0])
	}
	deg := entries[5].Receipt
	if len(deg.CapabilityDegradations) != 1 || deg.CapabilityDegradations[0].Capability != CapabilityLedger ||
		!strings.Contains(*deg.CapabilityDegradations[0].Evidence, "no space left on device") ||
		deg.TelemetrySummary["receipts_delayed"] != float64(4) || deg.TelemetrySummary["receipts_lost"] != float64(0) {
		t.Fatalf("outage report: %+v", deg)
	}
	if len(res.Extra) != 1 || res.Extra[0].Event != contract.EventCapabilityDegraded {
		t.Fatalf("the outage report is not handed back for the sinks: %+v", res.Extra)
	}
	if n, _ := l.Unrecorded(); n != 0 {
		t.Fatalf("Unrecorded after recovery = %d", n)
	}
}

func TestSpoolRetriesOnItsOwn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	full := diskFull(l)
	full.Store(true)
	mustAppend(t, l, testReceipt(contract.EventSessionStarted), AppendOptions{})
	full.Store(false)
	deadline := time.Now().Add(10 * time.Second)
	for len(readAll(t, path, 0)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the held receipt was never written without a further append")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := events(assertGapless(t, path)); got[0] != contract.EventSessionStarted || got[1] != contract.EventCapabilityDegraded {
		t.Fatalf("events %v", got)
	}
}

func TestFullSpoolDropsTicksThenMinorReceiptsBeforeTheSessionStory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	full := diskFull(l)
	full.Store(true)
	mustAppend(t, l, testReceipt(contract.EventSessionStarted), AppendOptions{})
	for range SpoolReceipts - 2 {
		mustAppend(t, l, degradedReceipt(), AppendOptions{})
	}
	mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	// Full now: the tick goes first, then the oldest minor receipts.
	for range 10 {
		mustAppend(t, l, testReceipt(contract.EventFrameEnded), AppendOptions{})
	}
	// A tick cannot push out anything more important: it is dropped.
	mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	if n, _ := l.Unrecorded(); n != SpoolReceipts+11 {
		t.Fatalf("Unrecorded = %d, want %d (waiting + lost)", n, SpoolReceipts+11)
	}
	full.Store(false)
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	entries := assertGapless(t, path)
	count := map[contract.Event]int{}
	for _, e := range entries {
		count[e.Receipt.Event]++
	}
	if count[contract.EventSessionStarted] != 1 || count[contract.EventFrameEnded] != 10 || count[contract.EventSupervisorTick] != 0 ||
		count[contract.EventCapabilityDegraded] != SpoolReceipts-2-9+1 {
		t.Fatalf("kept %v", count)
	}
	deg := entries[len(entries)-1].Receipt
	if deg.Event != contract.EventCapabilityDegraded || deg.TelemetrySummary["receipts_lost"] != float64(11) ||
		deg.Warnings[0].Code != "ledger_receipts_lost" || !strings.Contains(deg.Warnings[0].Message, "supervisor.tick×2") {
		t.Fatalf("outage report: %+v", deg)
	}
}

func degradedReceipt() contract.LifecycleReceipt {
	r := testReceipt(contract.EventCapabilityDegraded)
	ev := "test"
	r.CapabilityDegradations = []contract.CapabilityDegradation{{Capability: "telemetry",
		PreviousSupport: contract.SupportNative, CurrentSupport: contract.SupportUnavailable, Evidence: &ev}}
	return r
}

func TestCloseReportsWhatNeverMadeIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l, err := Open(path, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	full := diskFull(l)
	full.Store(true)
	mustAppend(t, l, testReceipt(contract.EventSessionEnded), AppendOptions{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n, cause := l.Unrecorded(); n != 1 || !errors.Is(cause, unix.ENOSPC) {
		t.Fatalf("after Close: Unrecorded = %d, %v", n, cause)
	}
}

func TestGroupCommitSyncsOncePerWindowAndNeverForTicks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	base := l.syncs.Load()
	for range 20 {
		mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	}
	time.Sleep(3 * GroupWindow)
	if n := l.syncs.Load() - base; n != 0 {
		t.Fatalf("ticks caused %d syncs", n)
	}
	// Written before Append returns: a reader sees them at once.
	if got := len(readAll(t, path, 0)); got != 20 {
		t.Fatalf("reader sees %d receipts", got)
	}
	for range 20 {
		mustAppend(t, l, testReceipt(contract.EventFrameOpened), AppendOptions{})
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.syncs.Load() == base {
		if time.Now().After(deadline) {
			t.Fatal("no group sync after frame receipts")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := l.syncs.Load() - base; n > 2 {
		t.Fatalf("20 receipts within one window caused %d syncs, want one group sync", n)
	}
}

// A state change starts its sync at once, without Append waiting for it
// and without waiting for the window; Close syncs what is left.
func TestGroupCommitSyncsStateChangesAtOnceAndAtClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	l.window = time.Hour // only a state change or Close can sync now
	if !l.dirUnsynced {
		t.Fatal("a new ledger's folder entry is not marked for the first sync")
	}
	mustAppend(t, l, testReceipt(contract.EventFrameOpened), AppendOptions{})
	if n := l.syncs.Load(); n != 0 {
		t.Fatalf("a frame receipt caused %d syncs before its window ended", n)
	}
	for _, ev := range []contract.Event{contract.EventSessionStarted, contract.EventSessionEnded} {
		before := l.syncs.Load()
		mustAppend(t, l, testReceipt(ev), AppendOptions{})
		waitFor(t, func() bool { return l.syncs.Load() > before }, "the sync of "+string(ev))
		if l.dirUnsynced {
			t.Fatal("the first sync left the folder entry unsynced")
		}
	}
	mustAppend(t, l, testReceipt(contract.EventFrameOpened), AppendOptions{})
	before := l.syncs.Load()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := l.syncs.Load(); n != before+1 {
		t.Fatalf("Close synced %d times with a receipt unsynced, want 1", n-before)
	}
}

// waitFor polls cond until it holds; the deadline only guards against a
// hang.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s never happened", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestSyncEachSyncsEveryReceipt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l, err := Open(path, Options{Now: fixedNow, Sync: SyncEach})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 5 {
		mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	}
	if n := l.syncs.Load(); n != 5 {
		t.Fatalf("SyncEach: %d syncs for 5 receipts", n)
	}
}

func TestParseDurability(t *testing.T) {
	for in, want := range map[string]SyncMode{"": SyncGroup, "group": SyncGroup, "sync": SyncEach} {
		if got, err := ParseDurability(in); err != nil || got != want {
			t.Errorf("ParseDurability(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseDurability("fast"); err == nil || !strings.Contains(err.Error(), "group") {
		t.Errorf("ParseDurability(fast) = %v", err)
	}
}

// TestRealFullDisk fills a real tmpfs when the tests may mount one (root);
// the fault hook above covers the same path everywhere else.
func TestRealFullDisk(t *testing.T) {
	dir := testutil.SmallTmpfs(t, "128k", "the full-disk path is covered by the fault-injecting tests (TestSpool*)")
	path := filepath.Join(dir, "receipts.jsonl")
	l := openTest(t, path)
	mustAppend(t, l, testReceipt(contract.EventSessionStarted), AppendOptions{})
	filler := filepath.Join(dir, "filler")
	testutil.FillDisk(t, filler)
	var spooled int
	for range 50 {
		_, res := mustAppend(t, l, testReceipt(contract.EventFrameEnded), AppendOptions{})
		if res.Outcome == Spooled {
			spooled++
		}
	}
	if spooled == 0 {
		t.Fatal("no receipt was held on a full tmpfs")
	}
	if rep, err := Verify(path); err != nil || rep.TornTail {
		t.Fatalf("a full disk left the ledger torn: %+v %v", rep, err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	entries := assertGapless(t, path)
	if len(entries) != 52 || entries[len(entries)-1].Receipt.Event != contract.EventCapabilityDegraded {
		t.Fatalf("after space returned: %d receipts, last %s", len(entries), entries[len(entries)-1].Receipt.Event)
	}
	t.Logf("real tmpfs: %d of 50 receipts held while full, all recorded after", spooled)
}

// TestDegradedReceiptKeepsHarnessIdentity: the capability.degraded
// receipt that ends an outage carries the harness run and task of the
// receipt it reports with, like every derived receipt (it used to drop
// them while the gap receipt kept them).
func TestDegradedReceiptKeepsHarnessIdentity(t *testing.T) {
	sid, run, task := "hs", "hr", "ht"
	l := &Ledger{opts: Options{IDs: ids.SourceFunc(func(p string) string { return p + "1" })}}
	ref := contract.LifecycleReceipt{ClientID: "c", AdapterID: "a", InvocationID: "inv_x", IntegrationMode: contract.ModeLauncherWrapper,
		HarnessSessionID: &sid, HarnessRunID: &run, HarnessTaskID: &task}
	now := time.Unix(100, 0)
	d := l.degradedReceipt(ref, outage{ref: ref, since: now, until: now.Add(time.Second)})
	if d.HarnessSessionID != &sid || d.HarnessRunID != &run || d.HarnessTaskID != &task || d.InvocationID != "inv_x" {
		t.Fatalf("degraded receipt lost the harness identity: %+v", d)
	}
	g := gapReceipt(ref, &Gap{Scope: "s", From: 1, To: 2}, 3, now, l.opts.IDs)
	if g.HarnessRunID != &run || g.HarnessTaskID != &task || g.ClientID != "c" {
		t.Fatalf("gap receipt lost the harness identity: %+v", g)
	}
}
