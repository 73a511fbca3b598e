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
	t.Run("unknown stop leaves exit_status out and says so in meta", func(t *testing.T) {
		post, err := OrgLoopWebhookPost(receipt(EventSessionEnded, StatusObserved, 9, nil), o)
		if err != nil {
			t.Fatal(err)
		}
		if post.ExitStatus != nil || post.Meta["phase"] != "stopped" || post.Meta["outcome"] != "unknown" {
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
