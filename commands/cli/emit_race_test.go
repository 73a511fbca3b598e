package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// TestEmitsRacingUnderOneKeySettleBeforeRecording: two `emit`s of
// different moments under one new idempotency key, into a session no
// wrapper runs (one that exists, and one the emits create), race. One is
// recorded; the other is refused with the key conflict and records
// nothing — never a failed state_conflict receipt the ledger appended
// because both checked the key before either recorded it.
func TestEmitsRacingUnderOneKeySettleBeforeRecording(t *testing.T) {
	rounds := 40
	if testing.Short() {
		rounds = 10
	}
	reg := builtin.Default()
	root := t.TempDir()
	emit := func(id, key string, args ...string) error {
		o := emitOptions{Event: args[0], Session: id, IdempotencyKey: key, StateDir: root, Out: io.Discard,
			Getenv: func(string) string { return "" }, Now: time.Now, Cwd: root, Registry: reg}
		if len(args) > 1 {
			o.FrameID = args[1]
		}
		return emitRun(context.Background(), o)
	}
	for i := range rounds {
		id := fmt.Sprintf("ses_RACE%03d", i)
		if i%2 == 0 { // an existing session
			if err := emit(id, "", "context.compacted"); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for j, args := range [][]string{{"context.compacted"}, {"frame.opening", "f1"}} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				errs[j] = emit(id, "K", args...)
			}()
		}
		close(start)
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) {
			t.Fatalf("round %d: emits answered %v and %v, want one recorded and one refused", i, errs[0], errs[1])
		}
		for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
			if err != nil {
				t.Fatal(err)
			}
			if r := e.Receipt; r.Status == contract.StatusFailed {
				t.Fatalf("round %d: the losing emit recorded receipt %d (%s, failed %v): the race was settled by the ledger, not before it", i, e.Sequence, r.Event, *r.FailureClass)
			}
		}
	}
}
