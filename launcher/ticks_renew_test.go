package launcher

import (
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestTicksDuringRenewalAreNotRunning: while a renewal stops the harness
// (slow to stop: 4×grace) and starts it again, ticks go on but none says
// `running`: the harness they describe is on its way out (issue 51, row
// 2: HCP read such a tick as PAUSED → RUNNING and lost the renewal).
// Ticks before the renewal and after it say running.
func TestTicksDuringRenewalAreNotRunning(t *testing.T) {
	t.Parallel()
	f, ft := renewFixture(t)
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events(), contract.EventSupervisorTick) > 0 })
	if err := <-renewAsync(t, f, renewal.Request{Reason: "test"}); err != nil {
		t.Fatalf("renew: %v", err)
	}
	n := len(f.rec.events())
	testutil.WaitFor(t, func() bool { return countEvents(f.rec.events()[n:], contract.EventSupervisorTick) > 0 })
	ft.proc(1).exit(ptyio.ExitStatus{Code: 0})
	<-done

	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	phase := "before"
	seen := map[string]map[string]int{"before": {}, "renewal": {}, "after": {}}
	for _, m := range f.rec.moments {
		step, _ := m.Summary["renewal_step"].(string)
		switch {
		case m.Event == contract.EventSessionEnding && step == "ending":
			phase = "renewal"
		case m.Event == contract.EventSessionStarted && step == "started":
			phase = "after"
		case m.Event == contract.EventSupervisorTick:
			st, _ := m.Summary["state"].(string)
			seen[phase][st]++
		}
	}
	if seen["renewal"]["running"] > 0 || seen["renewal"][tickRenewing] == 0 {
		t.Errorf("ticks during the renewal by state: %v, want some %q and none running", seen["renewal"], tickRenewing)
	}
	// A tick between the renewal's start and its session.ending (which the
	// renewal's goroutine records through the loop) already says renewing.
	others := len(seen["before"]) - 1
	if seen["before"][tickRenewing] > 0 {
		others--
	}
	if seen["before"]["running"] == 0 || others > 0 {
		t.Errorf("ticks before the renewal by state: %v, want running (and renewing once the renewal began)", seen["before"])
	}
	if seen["after"][tickRenewing] > 0 && seen["after"]["running"] == 0 {
		t.Errorf("ticks after the renewal by state: %v, want running", seen["after"])
	}
}
