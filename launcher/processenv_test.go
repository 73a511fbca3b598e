package launcher

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelid"
	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestProcessTraceparent: the launch and each renewal's
// relaunch get the TRACEPARENT of their own number, and mapping the
// session's receipts gives incarnation N exactly the span id handed to
// process N.
func TestProcessTraceparent(t *testing.T) {
	t.Parallel()
	f, ft := renewFixture(t)
	id := f.cfg.Record.ID
	f.cfg.Spec.Env = []string{"PATH=/usr/bin:/bin", "TRACEPARENT=inherited"}
	f.cfg.ProcessEnv = func(n int) []string {
		return []string{"TRACEPARENT=" + otelid.Traceparent(id, otelid.ProcessSpan(n))}
	}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	for n := 2; n <= 3; n++ {
		if err := <-renewAsync(t, f, renewal.Request{Reason: "test"}); err != nil {
			t.Fatalf("renewal %d: %v", n-1, err)
		}
		testutil.WaitFor(t, func() bool { return ft.count() == n })
	}
	ft.proc(2).exit(ptyio.ExitStatus{Code: 0})
	<-done

	var handed []string // the span id each process got, in order
	for i := range ft.count() {
		var tps []string
		for _, kv := range ft.proc(i).env {
			if v, ok := strings.CutPrefix(kv, "TRACEPARENT="); ok {
				tps = append(tps, v)
			}
		}
		if len(tps) != 1 || len(strings.Split(tps[0], "-")) != 4 {
			t.Fatalf("process %d: TRACEPARENT %q, want one", i+1, tps)
		}
		handed = append(handed, strings.Split(tps[0], "-")[2])
	}

	m := otelmap.New(id)
	var incs []otelmap.Span
	f.rec.mu.Lock()
	for i, mo := range f.rec.moments {
		seq := uint64(i + 1)
		out := m.Map(ledger.Entry{Sequence: seq, Receipt: contract.LifecycleReceipt{
			ReceiptID: "r", Sequence: &seq, Event: mo.Event, AdapterID: "claude",
			AtEpochS: 1778100000 + int64(i), TelemetrySummary: mo.Summary,
		}})
		for _, s := range out.Spans {
			if strings.HasPrefix(s.Name, "invoke_agent") {
				incs = append(incs, s)
			}
		}
	}
	f.rec.mu.Unlock()
	slices.SortFunc(incs, func(a, b otelmap.Span) int { return a.Start.Compare(b.Start) })
	var mapped []string
	for _, s := range incs {
		mapped = append(mapped, hex.EncodeToString(s.ID[:]))
	}
	if len(handed) != 3 || !slices.Equal(handed, mapped) {
		t.Errorf("span ids handed to the processes %v, the incarnation spans mapped %v; want the same three", handed, mapped)
	}
}

// TestPriorProcesses: a continued session counts the processes its
// ledger started, not a switch to a new harness session inside one.
func TestPriorProcesses(t *testing.T) {
	sw := map[string]any{contract.SummaryReason: contract.HarnessSessionSwitched}
	prior := []contract.LifecycleReceipt{
		{Event: contract.EventSessionStarting},
		{Event: contract.EventSessionStarted},
		{Event: contract.EventSessionEnded, TelemetrySummary: sw},
		{Event: contract.EventSessionStarting, TelemetrySummary: sw},
		{Event: contract.EventSessionStarting, TelemetrySummary: map[string]any{contract.SummaryReason: "renewal"}},
	}
	if n := priorProcesses(prior); n != 2 {
		t.Errorf("%d processes, want 2", n)
	}
	if got := replaceEnv([]string{"A=1", "TRACEPARENT=x", "B=2"}, []string{"TRACEPARENT=y"}); !slices.Equal(got, []string{"A=1", "B=2", "TRACEPARENT=y"}) {
		t.Errorf("replaceEnv: %q", got)
	}
}
