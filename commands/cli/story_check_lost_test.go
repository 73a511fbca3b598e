package cli_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// TestStoryChecksTakeALaunchLostBeforeItStarted: a wrapper lost after
// its session.starting and before session.started is sealed as a failed
// end, and `run --continue-session` then starts the harness: the first
// launch failed (one failed terminal event in OrgLoop, no incarnation),
// the continuation is an incarnation, and a renewal of that first launch
// would still be refused.
func TestStoryChecksTakeALaunchLostBeforeItStarted(t *testing.T) {
	failed := contract.FailureInternalError
	mk := func(seq uint64, ev contract.Event, status contract.ReceiptStatus, reason string) contract.LifecycleReceipt {
		r := contract.LifecycleReceipt{Event: ev, Status: status, Sequence: &seq, ReceiptID: fmt.Sprintf("r%d", seq), EventID: fmt.Sprintf("e%d", seq)}
		r.TelemetrySummary = map[string]any{}
		if ev == contract.EventSessionEnded {
			r.TelemetrySummary = contract.SessionEndedSummary(contract.ExitClass{Phase: contract.PhaseStopped, Outcome: contract.LifecycleUnknown, Reason: reason}, contract.ExitFacts{Code: -1}, time.Unix(1, 0), time.Unix(2, 0), "")
			if status == contract.StatusFailed {
				r.FailureClass = &failed
			}
		} else if reason != "" {
			r.TelemetrySummary[contract.SummaryReason] = reason
		}
		if seq > 2 {
			r.TelemetrySummary[contract.SummaryContinuation] = 1 // run --continue-session
		}
		return r
	}
	s := story{id: "ses_x", receipts: []contract.LifecycleReceipt{
		mk(1, contract.EventSessionStarting, contract.StatusObserved, ""),
		mk(2, contract.EventSessionEnded, contract.StatusFailed, "wrapper_lost"),
		mk(3, contract.EventSessionStarting, contract.StatusObserved, ""),
		mk(4, contract.EventSessionStarted, contract.StatusObserved, ""),
		mk(5, contract.EventSessionEnded, contract.StatusObserved, "exit_code_0"),
	}, lives: []harnessLife{{pid: 1, startN: 1, exitN: 1, exited: true}, {pid: 2, startN: 4, exitN: 4, exited: true}}}
	if err := checkStoryOrgLoop(s); err != nil {
		t.Errorf("orgloop check: %v", err)
	}
	if err := checkStoryCoherent(s); err != nil {
		t.Errorf("coherent check: %v", err)
	}
	s.receipts[2] = mk(3, contract.EventSessionStarting, contract.StatusObserved, contract.StoppedByRenewal)
	if err := checkStoryCoherent(s); err == nil {
		t.Error("coherent check took a renewal of a launch that never started")
	}
}
