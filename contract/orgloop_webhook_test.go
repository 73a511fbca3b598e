package contract

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"
)

// connectorLifecycle is how OrgLoop's coding-agent connector turns a
// webhook body into phase, outcome and reason (its resolveLifecycle, as
// documented in seed 003's exit-status table).
func connectorLifecycle(hookType string, exit *int) (LifecyclePhase, LifecycleOutcome, string) {
	if hookType == "start" {
		return PhaseStarted, "", ""
	}
	code := 0
	if exit != nil {
		code = *exit
	}
	switch {
	case code == 0:
		return PhaseCompleted, LifecycleSuccess, "exit_code_0"
	case code > 128:
		names := map[int]string{2: "sigint", 9: "sigkill", 15: "sigterm"}
		n, ok := names[code-128]
		if !ok {
			n = "signal_" + strconv.Itoa(code-128)
		}
		return PhaseStopped, LifecycleCancelled, n
	default:
		return PhaseFailed, LifecycleFailure, "exit_code_" + strconv.Itoa(code)
	}
}

// TestOrgLoopWebhookPostAgreesWithConnector checks, for every exit-status
// row of seed 003, that OrgLoop's connector reading lifeloop's stop post
// arrives at the phase, outcome and reason lifeloop's own projection has.
func TestOrgLoopWebhookPostAgreesWithConnector(t *testing.T) {
	start := time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)
	end := start.Add(42 * time.Second)
	for _, f := range []ExitFacts{
		{Code: 0}, {Code: 1}, {Code: 3}, {Code: 127}, {Code: 130}, {Code: 137}, {Code: 143}, {Code: 129},
		{Code: -1, Signaled: true, Signal: 2}, {Code: -1, Signaled: true, Signal: 9},
		{Code: -1, Signaled: true, Signal: 15}, {Code: -1, Signaled: true, Signal: 6},
	} {
		t.Run(strconv.Itoa(f.Code)+"/"+strconv.Itoa(f.Signal), func(t *testing.T) {
			sum := ledgerJSON(SessionEndedSummary(ClassifyExit(f), f, start, end, "/work/repo"))
			r := receipt(EventSessionEnded, StatusObserved, 9, sum)
			o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessPi}
			post, err := OrgLoopWebhookPost(r, o)
			if err != nil {
				t.Fatal(err)
			}
			ev, _ := ProjectOrgLoop(r, o)
			lc := ev.Payload.Lifecycle
			phase, outcome, reason := connectorLifecycle(post.HookType, post.ExitStatus)
			if phase != lc.Phase || outcome != lc.Outcome || reason != lc.Reason {
				t.Fatalf("connector reads %s/%s/%s, lifeloop says %s/%s/%s", phase, outcome, reason, lc.Phase, lc.Outcome, lc.Reason)
			}
			if post.HookType != "stop" || post.SessionID != "ses_A" || post.WorkingDirectory != "/work/repo" || post.DurationSeconds != 42 || post.Timestamp != ev.Timestamp {
				t.Fatalf("post = %+v", post)
			}
			if post.Meta["event_id"] != ev.ID || post.Meta["dedupe_key"] != "pi:ses_A:"+string(lc.Phase) || post.Meta["reason"] != lc.Reason {
				t.Fatalf("meta = %v", post.Meta)
			}
		})
	}
}

func TestOrgLoopWebhookPost(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode, Cwd: "/work/repo"}
	t.Run("start", func(t *testing.T) {
		post, err := OrgLoopWebhookPost(receipt(EventSessionStarted, StatusObserved, 2, nil), o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(post)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		want := []string{"session_id", "working_directory", "duration_seconds", "hook_type", "timestamp", "meta"}
		if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Fatalf("keys = %v, want %v", got, want)
		}
		if m["hook_type"] != "start" || m["session_id"] != "ses_A" || m["working_directory"] != "/work/repo" || m["timestamp"] != "2026-05-06T20:40:00.000Z" {
			t.Fatalf("post = %s", b)
		}
	})
	t.Run("launch failed without an exit status reads as a failure", func(t *testing.T) {
		r := receipt(EventSessionStarting, StatusFailed, 1, nil)
		r.FailureClass = Ptr(FailureCapabilityUnsupported)
		post, err := OrgLoopWebhookPost(r, o)
		if err != nil {
			t.Fatal(err)
		}
		if phase, _, _ := connectorLifecycle(post.HookType, post.ExitStatus); phase != PhaseFailed || post.Meta["reason"] != "capability_unsupported" {
			t.Fatalf("post = %+v", post)
		}
	})
	t.Run("unknown stop reads as stopped and says so in meta", func(t *testing.T) {
		post, err := OrgLoopWebhookPost(receipt(EventSessionEnded, StatusObserved, 9, nil), o)
		if err != nil {
			t.Fatal(err)
		}
		if post.ExitStatus == nil || *post.ExitStatus != 143 || post.Meta["phase"] != "stopped" || post.Meta["outcome"] != "unknown" {
			t.Fatalf("post = %+v", post)
		}
	})
	for _, ev := range []Event{EventFrameOpened, EventFrameEnded, EventSupervisorTick} {
		t.Run("no post for "+string(ev), func(t *testing.T) {
			if _, err := OrgLoopWebhookPost(receipt(ev, StatusObserved, 3, nil), o); !errors.Is(err, ErrNoOrgLoopPhase) {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// TestOrgLoopWebhookStopsThatDidNotComplete runs OrgLoop's connector
// reading over every kind of stop lifeloop records: it arrives at
// lifeloop's phase (and outcome, where the connector's table has it), so
// a route on phase completed fires only for what completed.
func TestOrgLoopWebhookStopsThatDidNotComplete(t *testing.T) {
	start := time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)
	end := start.Add(42 * time.Second)
	ended := func(f ExitFacts) map[string]any {
		return ledgerJSON(SessionEndedSummary(ClassifyExit(f), f, start, end, "/work/repo"))
	}
	renewalStop := ledgerJSON(map[string]any{"reason": "renewal", "renewal_attempt": 2, "renewal_step": "ended",
		"exit_code": 0, "stopped_by": "renewal", "phase": "stopped", "outcome": "cancelled", "exit_reason": "renewal"})
	lost := ledgerJSON(SessionEndedSummary(ExitClass{PhaseStopped, LifecycleUnknown, "wrapper_lost"}, ExitFacts{Code: -1}, start, end, "/work/repo"))
	launchFailed := func(code int, reason string) LifecycleReceipt {
		r := receipt(EventSessionEnded, StatusFailed, 2, ledgerJSON(map[string]any{"exit_status": code, "reason": reason}))
		r.ParentReceiptID, r.FailureClass = Ptr("lfr_starting"), Ptr(FailureAdapterUnavailable)
		return r
	}
	refused := receipt(EventSessionStarting, StatusFailed, 1, nil)
	refused.FailureClass = Ptr(FailureCapabilityUnsupported)
	rows := map[string]LifecycleReceipt{
		"abort, exit 0":          receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: 0, StoppedBy: StoppedByAbort, FromWaitStatus: true})),
		"abort, SIGKILL":         receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: -1, Signaled: true, Signal: 9, StoppedBy: StoppedByAbort})),
		"sigint answered exit 0": receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: 0, StoppedBy: StoppedBySIGINT, FromWaitStatus: true})),
		"sigterm, exit 2":        receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: 2, StoppedBy: StoppedBySIGTERM, FromWaitStatus: true})),
		"timeout, exit 0":        receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: 0, StoppedBy: StoppedByTimeout, FromWaitStatus: true})),
		"own exit 200":           receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: 200, FromWaitStatus: true})),
		"renewal's stop":         receipt(EventSessionEnded, StatusObserved, 9, renewalStop),
		"lost wrapper":           receipt(EventSessionEnded, StatusObserved, 9, lost),
		"nothing known":          receipt(EventSessionEnded, StatusObserved, 9, nil),
		"launch failed 127":      launchFailed(127, "command_not_found"),
		"launch failed 126":      launchFailed(126, "permission_denied"),
		"launch refused":         refused,
		"exit 0":                 receipt(EventSessionEnded, StatusObserved, 9, ended(ExitFacts{Code: 0, FromWaitStatus: true})),
		"watch idle":             receipt(EventSessionEnded, StatusObserved, 9, ledgerJSON(map[string]any{"phase": "completed", "outcome": "success", "reason": "watch_idle"})),
	}
	for name, r := range rows {
		t.Run(name, func(t *testing.T) {
			o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex}
			post, err := OrgLoopWebhookPost(r, o)
			if err != nil {
				t.Fatal(err)
			}
			ev, _ := ProjectOrgLoop(r, o)
			lc := ev.Payload.Lifecycle
			phase, outcome, _ := connectorLifecycle(post.HookType, post.ExitStatus)
			if phase != lc.Phase {
				t.Fatalf("connector reads %s (exit_status %v), lifeloop says %s", phase, post.ExitStatus, lc.Phase)
			}
			if lc.Outcome != LifecycleUnknown && outcome != lc.Outcome {
				t.Fatalf("connector reads outcome %s, lifeloop says %s", outcome, lc.Outcome)
			}
			if post.Meta["dedupe_key"] != lc.DedupeKey || OrgLoopDedupeKey(HarnessCodex, post.SessionID, phase) != lc.DedupeKey {
				t.Fatalf("connector key %s, lifeloop key %s", OrgLoopDedupeKey(HarnessCodex, post.SessionID, phase), lc.DedupeKey)
			}
		})
	}
	t.Run("renewal keys", func(t *testing.T) {
		post, _ := OrgLoopWebhookPost(rows["renewal's stop"], OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex})
		if post.SessionID != "ses_A.r2" || post.Meta["session_id"] != "ses_A" || post.Meta["exit_status"] != nil {
			t.Fatalf("post = %+v", post)
		}
	})
}
