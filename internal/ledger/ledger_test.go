package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

func openTest(t *testing.T, path string) *Ledger {
	t.Helper()
	l, err := Open(path, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func mustAppend(t *testing.T, l *Ledger, r contract.LifecycleReceipt, o AppendOptions) (contract.LifecycleReceipt, AppendResult) {
	t.Helper()
	got, res, err := l.AppendWith(r, o)
	if err != nil {
		t.Fatal(err)
	}
	return got, res
}

func readAll(t *testing.T, path string, since uint64) []Entry {
	t.Helper()
	var out []Entry
	for e, err := range ReadSince(path, since) {
		if err != nil {
			t.Fatalf("ReadSince: %v", err)
		}
		out = append(out, e)
	}
	return out
}

func TestAppendAssignsSequenceAndDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	for i := 1; i <= 5; i++ {
		got, res := mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
		if res.Outcome != Appended || got.Sequence == nil || *got.Sequence != uint64(i) {
			t.Fatalf("append %d: outcome %s seq %v", i, res.Outcome, got.Sequence)
		}
		if got.ReceiptID == "" || got.AtEpochS != 1778100000 || got.SchemaVersion != contract.ReceiptSchemaVersion {
			t.Fatalf("defaults not filled: %+v", got)
		}
	}
	// A caller-supplied sequence is overridden.
	r := testReceipt(contract.EventFrameOpening)
	r.Sequence = contract.Ptr(uint64(99))
	got, _ := mustAppend(t, l, r, AppendOptions{})
	if *got.Sequence != 6 {
		t.Fatalf("sequence = %d, want 6", *got.Sequence)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("ledger mode %o, want 600", fi.Mode().Perm())
	}
	// Reopening learns the last sequence.
	l2 := openTest(t, path)
	if l2.LastSequence() != 6 {
		t.Fatalf("reopened LastSequence = %d", l2.LastSequence())
	}
	got, _ = mustAppend(t, l2, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	if *got.Sequence != 7 {
		t.Fatalf("after reopen sequence = %d, want 7", *got.Sequence)
	}
	// The first Ledger sees the second's append before its own.
	got, _ = mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	if *got.Sequence != 8 {
		t.Fatalf("stale ledger sequence = %d, want 8", *got.Sequence)
	}
	rep, err := Verify(path)
	if err != nil || !rep.OK || rep.Count != 8 || rep.FirstSeq != 1 || rep.LastSeq != 8 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestAppendRejectsInvalidReceipt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	r := testReceipt(contract.EventSupervisorTick)
	r.ClientID = ""
	if _, _, err := l.Append(r); err == nil || !strings.Contains(err.Error(), "client_id") {
		t.Fatalf("err = %v, want a client_id validation error", err)
	}
	if _, _, err := l.AppendWith(testReceipt(contract.EventSupervisorTick), AppendOptions{ExternalSequence: contract.Ptr(uint64(1))}); err == nil {
		t.Fatal("ExternalSequence without scope accepted")
	}
	got, _ := mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	if *got.Sequence != 1 {
		t.Fatalf("rejected receipts consumed sequences: got %d", *got.Sequence)
	}
}

func TestIdempotency(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	withKey := func(key, harness string) contract.LifecycleReceipt {
		r := testReceipt(contract.EventFrameOpened)
		r.IdempotencyKey = contract.Ptr(key)
		r.HarnessSessionID = contract.Ptr(harness)
		return r
	}
	orig, res := mustAppend(t, l, withKey("idem_1", "h1"), AppendOptions{})
	if res.Outcome != Appended {
		t.Fatalf("first: %s", res.Outcome)
	}

	tests := []struct {
		name        string
		mutate      func(r contract.LifecycleReceipt) contract.LifecycleReceipt
		wantOutcome Outcome
	}{
		{"identical", func(r contract.LifecycleReceipt) contract.LifecycleReceipt { return r }, Replayed},
		{"new receipt id, time and invocation", func(r contract.LifecycleReceipt) contract.LifecycleReceipt {
			r.ReceiptID, r.AtEpochS, r.InvocationID = "lfr_other", 42, "inv_other"
			return r
		}, Replayed},
		{"different harness session", func(r contract.LifecycleReceipt) contract.LifecycleReceipt {
			r.HarnessSessionID = contract.Ptr("h2")
			return r
		}, Conflict},
		{"different status", func(r contract.LifecycleReceipt) contract.LifecycleReceipt {
			r.Status = contract.StatusDelivered
			return r
		}, Conflict},
		{"other client same key", func(r contract.LifecycleReceipt) contract.LifecycleReceipt {
			r.ClientID = "other-client"
			r.Status = contract.StatusDelivered
			return r
		}, Appended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := l.LastSequence()
			got, res := mustAppend(t, l, tt.mutate(withKey("idem_1", "h1")), AppendOptions{})
			if res.Outcome != tt.wantOutcome {
				t.Fatalf("outcome %s, want %s", res.Outcome, tt.wantOutcome)
			}
			switch tt.wantOutcome {
			case Replayed:
				if got.ReceiptID != orig.ReceiptID || *got.Sequence != *orig.Sequence || l.LastSequence() != before {
					t.Fatalf("replay returned %s/%d (last %d), want original %s/%d", got.ReceiptID, *got.Sequence, l.LastSequence(), orig.ReceiptID, *orig.Sequence)
				}
			case Conflict:
				if got.Status != contract.StatusFailed || got.FailureClass == nil || *got.FailureClass != contract.FailureStateConflict ||
					got.RetryClass == nil || *got.RetryClass != contract.RetryAfterReread {
					t.Fatalf("conflict receipt: %+v", got)
				}
				if len(got.Warnings) == 0 || got.Warnings[len(got.Warnings)-1].Code != WarnDuplicateIDConflict {
					t.Fatalf("conflict warnings: %+v", got.Warnings)
				}
				if *got.Sequence != before+1 || res.OriginalSequence != *orig.Sequence || got.ReceiptID == orig.ReceiptID {
					t.Fatalf("conflict seq %d orig %d", *got.Sequence, res.OriginalSequence)
				}
			case Appended:
				if *got.Sequence != before+1 {
					t.Fatalf("seq %d, want %d", *got.Sequence, before+1)
				}
			}
		})
	}
	// The index survives a reopen, and the conflicts did not replace the
	// original.
	l2 := openTest(t, path)
	got, res := mustAppend(t, l2, withKey("idem_1", "h1"), AppendOptions{})
	if res.Outcome != Replayed || got.ReceiptID != orig.ReceiptID {
		t.Fatalf("after reopen: %s %s", res.Outcome, got.ReceiptID)
	}
	_, res = mustAppend(t, l2, withKey("idem_1", "h3"), AppendOptions{})
	if res.Outcome != Conflict {
		t.Fatalf("after reopen conflict: %s", res.Outcome)
	}
	if rep, err := Verify(path); err != nil || !rep.OK {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestExternalSequenceGaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	ext := func(scope string, n uint64) AppendOptions {
		return AppendOptions{ExternalScope: scope, ExternalSequence: &n}
	}
	steps := []struct {
		scope   string
		ext     uint64
		wantGap *Gap
	}{
		{"a", 1, nil},
		{"a", 2, nil},
		{"a", 5, &Gap{"a", 3, 4}},
		{"b", 7, nil}, // first sighting of a scope is not a gap
		{"a", 6, nil},
		{"a", 6, nil}, // redelivery is not a gap
		{"a", 3, nil}, // late arrival is not a gap
		{"b", 9, &Gap{"b", 8, 8}},
	}
	for i, st := range steps {
		r := testReceipt(contract.EventFrameEnded)
		got, res := mustAppend(t, l, r, ext(st.scope, st.ext))
		if (res.Gap == nil) != (st.wantGap == nil) || (res.Gap != nil && *res.Gap != *st.wantGap) {
			t.Fatalf("step %d: gap %+v, want %+v", i, res.Gap, st.wantGap)
		}
		if st.wantGap != nil {
			if len(res.Extra) != 1 {
				t.Fatalf("step %d: extra %d", i, len(res.Extra))
			}
			g := res.Extra[0]
			if g.Event != contract.EventReceiptGapDetected || *g.Sequence+1 != *got.Sequence {
				t.Fatalf("step %d: gap receipt %+v before %d", i, g, *got.Sequence)
			}
			if g.TelemetrySummary["gap_from"] != st.wantGap.From || g.TelemetrySummary["gap_to"] != st.wantGap.To {
				t.Fatalf("gap range %+v", g.TelemetrySummary)
			}
		}
	}
	// The external state survives a reopen.
	l2 := openTest(t, path)
	_, res := mustAppend(t, l2, testReceipt(contract.EventFrameEnded), ext("a", 8))
	if res.Gap == nil || *res.Gap != (Gap{"a", 7, 7}) {
		t.Fatalf("after reopen gap %+v", res.Gap)
	}
	entries := readAll(t, path, 0)
	gaps := 0
	for _, e := range entries {
		if e.Receipt.Event == contract.EventReceiptGapDetected {
			gaps++
		}
	}
	if gaps != 3 || len(entries) != len(steps)+1+3 {
		t.Fatalf("ledger has %d entries with %d gap receipts", len(entries), gaps)
	}
	if rep, err := Verify(path); err != nil || !rep.OK {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestDanglingExternalEntryDropped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	n := uint64(1)
	mustAppend(t, l, testReceipt(contract.EventFrameEnded), AppendOptions{ExternalScope: "a", ExternalSequence: &n})
	l.Close()
	// A writer that died after recording external sequence 10 for ledger
	// sequence 2, before writing receipt 2.
	f, err := os.OpenFile(path+ExtSuffix, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"seq":2,"scope":"a","ext":10}` + "\n")
	f.Close()
	l2 := openTest(t, path)
	n = 2
	_, res := mustAppend(t, l2, testReceipt(contract.EventFrameEnded), AppendOptions{ExternalScope: "a", ExternalSequence: &n})
	if res.Gap != nil {
		t.Fatalf("dangling entry produced gap %+v", res.Gap)
	}
	data, _ := os.ReadFile(path + ExtSuffix)
	if bytes.Contains(data, []byte(`"ext":10`)) {
		t.Fatalf("dangling entry kept: %s", data)
	}
}

func TestTornTailRecovery(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "receipts.jsonl")
	l := openTest(t, path)
	for i := 0; i < 3; i++ {
		mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	}
	l.Close()
	torn := `{"schema_version":1,"receipt_id":"lfr_torn","sequ`
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(torn)
	f.Close()

	rep, err := Verify(path)
	if err != nil || rep.OK || !rep.TornTail || rep.TornTailBytes != int64(len(torn)) || rep.Count != 3 {
		t.Fatalf("Verify before repair = %+v, %v", rep, err)
	}
	if n := len(readAll(t, path, 0)); n != 3 {
		t.Fatalf("readers see %d receipts with a torn tail, want 3", n)
	}

	l2 := openTest(t, path)
	got, _ := mustAppend(t, l2, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	if *got.Sequence != 4 {
		t.Fatalf("sequence after repair %d", *got.Sequence)
	}
	if len(got.Warnings) != 1 || got.Warnings[0].Code != WarnTornTailRecovered {
		t.Fatalf("warnings %+v", got.Warnings)
	}
	next, _ := mustAppend(t, l2, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	if len(next.Warnings) != 0 {
		t.Fatalf("warning repeated: %+v", next.Warnings)
	}
	kept, err := os.ReadFile(path + TornSuffix)
	if err != nil || string(kept) != torn+"\n" {
		t.Fatalf("torn file %q, %v", kept, err)
	}
	if fi, _ := os.Stat(path + TornSuffix); fi.Mode().Perm() != 0o600 {
		t.Fatalf("torn file mode %o", fi.Mode().Perm())
	}
	rep, err = Verify(path)
	if err != nil || !rep.OK || rep.TornTail || rep.Count != 5 || rep.RecoveredTornBytes != int64(len(torn)+1) || len(rep.Warnings) != 1 {
		t.Fatalf("Verify after repair = %+v, %v", rep, err)
	}
}

func TestVerifyFindsProblems(t *testing.T) {
	line := func(seq uint64, id string) string {
		r := testReceipt(contract.EventSupervisorTick)
		r.SchemaVersion = contract.ReceiptSchemaVersion
		r.ReceiptID = id
		r.Sequence = &seq
		r.AtEpochS = 1
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	tests := []struct {
		name    string
		content string
		check   func(r Report) bool
	}{
		{"ok", line(1, "lfr_a") + line(2, "lfr_b"), func(r Report) bool { return r.OK && r.Count == 2 }},
		{"empty", "", func(r Report) bool { return r.OK && r.Count == 0 }},
		{"gap", line(1, "lfr_a") + line(4, "lfr_b"), func(r Report) bool {
			return !r.OK && len(r.Gaps) == 1 && r.Gaps[0] == [2]uint64{2, 3}
		}},
		{"starts late", line(3, "lfr_a"), func(r Report) bool { return !r.OK && r.Gaps[0] == [2]uint64{1, 2} }},
		{"repeated sequence", line(1, "lfr_a") + line(1, "lfr_b"), func(r Report) bool { return !r.OK && r.Duplicates == 1 }},
		{"repeated receipt id", line(1, "lfr_a") + line(2, "lfr_a"), func(r Report) bool { return !r.OK && r.Duplicates == 1 }},
		{"garbage line", line(1, "lfr_a") + "not json\n" + line(2, "lfr_b"), func(r Report) bool {
			return !r.OK && len(r.InvalidLines) == 1 && r.InvalidLines[0] == 2 && r.Count == 2
		}},
		{"unknown field", line(1, "lfr_a") + strings.Replace(line(2, "lfr_b"), `{`, `{"surprise":1,`, 1), func(r Report) bool {
			return !r.OK && len(r.InvalidLines) == 1 && r.InvalidLines[0] == 2
		}},
		{"null sequence", strings.Replace(line(1, "lfr_a"), `"sequence":1`, `"sequence":null`, 1), func(r Report) bool {
			return !r.OK && len(r.InvalidLines) == 1
		}},
		{"torn", line(1, "lfr_a") + `{"sch`, func(r Report) bool { return !r.OK && r.TornTail && r.Count == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "receipts.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(rep) {
				t.Fatalf("unexpected report %+v", rep)
			}
		})
	}
	if _, err := Verify(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing ledger: %v", err)
	}
}

func TestReadSince(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l, err := Open(path, Options{Sync: SyncNone, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const n = 1000 // many 4 KiB binary-search windows
	for i := 0; i < n; i++ {
		r := testReceipt(contract.EventSupervisorTick)
		if i%7 == 0 {
			r.TelemetrySummary = map[string]any{"pad": strings.Repeat("x", i%300)}
		}
		mustAppend(t, l, r, AppendOptions{})
	}
	for _, since := range []uint64{0, 1, 2, 100, 499, 511, 990, 999, 1000, 5000} {
		t.Run("since", func(t *testing.T) {
			got := readAll(t, path, since)
			want := 0
			if since < n {
				want = n - int(since)
			}
			if len(got) != want {
				t.Fatalf("since %d: %d entries, want %d", since, len(got), want)
			}
			for i, e := range got {
				if e.Sequence != since+uint64(i)+1 || *e.Receipt.Sequence != e.Sequence || !json.Valid(e.Raw) {
					t.Fatalf("since %d: entry %d has sequence %d", since, i, e.Sequence)
				}
			}
		})
	}
	// Early stop works.
	count := 0
	for range ReadSince(path, 10) {
		count++
		if count == 3 {
			break
		}
	}
	if count != 3 {
		t.Fatalf("early stop: %d", count)
	}
	// A missing ledger yields nothing.
	if got := readAll(t, filepath.Join(t.TempDir(), "none.jsonl"), 0); len(got) != 0 {
		t.Fatalf("missing ledger yielded %d", len(got))
	}
}

func TestReadSinceSkipsInvalidLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	for i := 0; i < 3; i++ {
		mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	f.WriteString("garbage\n")
	f.Close()
	mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	var seqs []uint64
	var lineErrs int
	for e, err := range ReadSince(path, 1) {
		var le *LineError
		if errors.As(err, &le) {
			lineErrs++
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Sequence)
	}
	if lineErrs != 1 || len(seqs) != 3 || seqs[2] != 4 {
		t.Fatalf("seqs %v, line errors %d", seqs, lineErrs)
	}
}

func TestConcurrentGoroutines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	// Two Ledgers on one file in one process exclude each other through
	// flock like two processes do.
	a, b := openTest(t, path), openTest(t, path)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(l *Ledger) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if _, _, err := l.Append(testReceipt(contract.EventSupervisorTick)); err != nil {
					t.Error(err)
					return
				}
			}
		}([]*Ledger{a, b}[w%2])
	}
	wg.Wait()
	rep, err := Verify(path)
	if err != nil || !rep.OK || rep.Count != 200 || rep.LastSeq != 200 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}

func TestFollow(t *testing.T) {
	for _, mode := range []string{"fsnotify", "poll"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "receipts.jsonl")
			// The ledger does not exist yet when following starts.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			got := make(chan uint64, 100)
			done := make(chan error, 1)
			go func() {
				fn := func(e Entry) error { got <- e.Sequence; return nil }
				if mode == "poll" {
					done <- followPolling(ctx, path, 2, fn)
				} else {
					done <- Follow(ctx, path, 2, fn)
				}
			}()
			l := openTest(t, path)
			for i := 0; i < 3; i++ {
				mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
			}
			if s := <-got; s != 3 {
				t.Fatalf("first followed sequence %d, want 3", s)
			}
			// A partial line is not delivered until it is complete.
			for i := 0; i < 2; i++ {
				mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
			}
			for want := uint64(4); want <= 5; want++ {
				if s := <-got; s != want {
					t.Fatalf("followed %d, want %d", s, want)
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("Follow returned %v", err)
			}
			select {
			case s := <-got:
				t.Fatalf("unexpected extra sequence %d", s)
			default:
			}
		})
	}
}

func TestFollowCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	stop := errors.New("stop")
	err := Follow(context.Background(), path, 0, func(Entry) error { return stop })
	if !errors.Is(err, stop) {
		t.Fatalf("Follow = %v, want the callback's error", err)
	}
}

func TestFollowWaitsForCompleteLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	first, _ := mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})
	line, err := json.Marshal(func() contract.LifecycleReceipt {
		r := first
		r.ReceiptID, r.Sequence = "lfr_second", contract.Ptr(uint64(2))
		return r
	}())
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	half := len(line) / 2
	if _, err := f.Write(line[:half]); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	collect := func(e Entry) error { got = append(got, e.Sequence); return nil }
	var last uint64
	off, err := followRead(path, -1, &last, collect)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != 1 || last != 1 {
		t.Fatalf("with a half-written line: got %v, last %d", got, last)
	}
	if _, err := f.Write(append(line[half:], '\n')); err != nil {
		t.Fatal(err)
	}
	if _, err := followRead(path, off, &last, collect); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != 2 || last != 2 {
		t.Fatalf("after the line completed: got %v, last %d", got, last)
	}
}

func TestReceiptIDIsReplayBoundaryWithoutKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	l := openTest(t, path)
	base := testReceipt(contract.EventSessionStarted)
	base.ReceiptID = "lfr_fixed"
	orig, _ := mustAppend(t, l, base, AppendOptions{})
	mustAppend(t, l, testReceipt(contract.EventSupervisorTick), AppendOptions{})

	tests := []struct {
		name   string
		mutate func(*contract.LifecycleReceipt)
		want   Outcome
	}{
		{"same receipt again", func(*contract.LifecycleReceipt) {}, Replayed},
		{"redelivered later", func(r *contract.LifecycleReceipt) { r.AtEpochS = 5; r.InvocationID = "inv_2" }, Replayed},
		{"same id, other content", func(r *contract.LifecycleReceipt) { r.Status = contract.StatusDegraded }, Conflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := base
			tt.mutate(&r)
			before := l.LastSequence()
			got, res := mustAppend(t, l, r, AppendOptions{})
			if res.Outcome != tt.want || res.OriginalSequence != *orig.Sequence {
				t.Fatalf("outcome %s (original %d), want %s (%d)", res.Outcome, res.OriginalSequence, tt.want, *orig.Sequence)
			}
			if tt.want == Replayed && (got.ReceiptID != "lfr_fixed" || l.LastSequence() != before) {
				t.Fatalf("replay appended or changed id: %s, last %d", got.ReceiptID, l.LastSequence())
			}
			if tt.want == Conflict && (got.ReceiptID == "lfr_fixed" || got.Status != contract.StatusFailed || *got.Sequence != before+1 ||
				!strings.Contains(got.Warnings[len(got.Warnings)-1].Message, `receipt_id "lfr_fixed"`)) {
				t.Fatalf("conflict receipt %+v", got)
			}
		})
	}
	l2 := openTest(t, path)
	if _, res := mustAppend(t, l2, base, AppendOptions{}); res.Outcome != Replayed {
		t.Fatalf("after reopen: %s", res.Outcome)
	}
	rep, err := Verify(path)
	if err != nil || !rep.OK || rep.Count != 3 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
}
