package contract

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestClassifyExit(t *testing.T) {
	tests := []struct {
		name string
		in   ExitFacts
		want ExitClass
	}{
		{"exit 0", ExitFacts{Code: 0}, ExitClass{PhaseCompleted, LifecycleSuccess, "exit_code_0"}},
		{"exit 1", ExitFacts{Code: 1}, ExitClass{PhaseFailed, LifecycleFailure, "exit_code_1"}},
		{"exit 2", ExitFacts{Code: 2}, ExitClass{PhaseFailed, LifecycleFailure, "exit_code_2"}},
		{"exit 127", ExitFacts{Code: 127}, ExitClass{PhaseFailed, LifecycleFailure, "exit_code_127"}},
		{"signal SIGINT", ExitFacts{Code: -1, Signaled: true, Signal: 2}, ExitClass{PhaseStopped, LifecycleCancelled, "sigint"}},
		{"signal SIGKILL", ExitFacts{Code: -1, Signaled: true, Signal: 9}, ExitClass{PhaseStopped, LifecycleCancelled, "sigkill"}},
		{"signal SIGTERM", ExitFacts{Code: -1, Signaled: true, Signal: 15}, ExitClass{PhaseStopped, LifecycleCancelled, "sigterm"}},
		{"signal SIGHUP", ExitFacts{Code: -1, Signaled: true, Signal: 1}, ExitClass{PhaseStopped, LifecycleCancelled, "signal_1"}},
		{"exit 130", ExitFacts{Code: 130}, ExitClass{PhaseStopped, LifecycleCancelled, "sigint"}},
		{"exit 137", ExitFacts{Code: 137}, ExitClass{PhaseStopped, LifecycleCancelled, "sigkill"}},
		{"exit 143", ExitFacts{Code: 143}, ExitClass{PhaseStopped, LifecycleCancelled, "sigterm"}},
		{"exit 129", ExitFacts{Code: 129}, ExitClass{PhaseStopped, LifecycleCancelled, "signal_1"}},
		{"exit 128", ExitFacts{Code: 128}, ExitClass{PhaseStopped, LifecycleUnknown, "session_stopped"}},
		{"not exited", ExitFacts{Code: -1}, ExitClass{PhaseStopped, LifecycleUnknown, "session_stopped"}},
		{"lifeloop forwarded sigint, harness exited 0", ExitFacts{Code: 0, StoppedBy: StoppedBySIGINT}, ExitClass{PhaseStopped, LifecycleCancelled, "sigint"}},
		{"lifeloop sent sigterm, harness died of it", ExitFacts{Code: -1, Signaled: true, Signal: 15, StoppedBy: StoppedBySIGTERM}, ExitClass{PhaseStopped, LifecycleCancelled, "sigterm"}},
		{"abort", ExitFacts{Code: 0, StoppedBy: StoppedByAbort}, ExitClass{PhaseStopped, LifecycleCancelled, "abort"}},
		{"renewal, exit 0", ExitFacts{Code: 0, StoppedBy: StoppedByRenewal}, ExitClass{PhaseStopped, LifecycleCancelled, "renewal"}},
		{"renewal, sigkill after grace", ExitFacts{Code: -1, Signaled: true, Signal: 9, StoppedBy: StoppedByRenewal}, ExitClass{PhaseStopped, LifecycleCancelled, "renewal"}},
		{"timeout, exit 0", ExitFacts{Code: 0, StoppedBy: StoppedByTimeout}, ExitClass{PhaseFailed, LifecycleFailure, "timeout"}},
		{"timeout, killed", ExitFacts{Code: -1, Signaled: true, Signal: 9, StoppedBy: StoppedByTimeout}, ExitClass{PhaseFailed, LifecycleFailure, "timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyExit(tt.in); got != tt.want {
				t.Fatalf("ClassifyExit(%+v) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func receipt(ev Event, status ReceiptStatus, seq uint64, summary map[string]any) LifecycleReceipt {
	return LifecycleReceipt{
		SchemaVersion: ReceiptSchemaVersion, ReceiptID: "lfr_1", ClientID: "lifeloop", AdapterID: "claude",
		InvocationID: "inv_1", Event: ev, EventID: "evt_1", Sequence: &seq,
		IntegrationMode: ModeLauncherWrapper, Status: status, AtEpochS: 1778100000,
		HarnessSessionID: Ptr("hs-1"), TelemetrySummary: summary,
	}
}

func TestProjectOrgLoop(t *testing.T) {
	start := time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)
	end := start.Add(90 * time.Second)
	endedSummary := func(e ExitFacts) map[string]any {
		return SessionEndedSummary(ClassifyExit(e), e, start, end, "/work/repo")
	}
	// roundTrip makes summaries look like ones read back from a ledger.
	roundTrip := func(m map[string]any) map[string]any {
		b, _ := json.Marshal(m)
		var out map[string]any
		_ = json.Unmarshal(b, &out)
		return out
	}
	tests := []struct {
		name      string
		r         LifecycleReceipt
		wantType  string
		phase     LifecyclePhase
		outcome   LifecycleOutcome
		reason    string
		exit      *int
		dedupeKey string
	}{
		{"started", receipt(EventSessionStarted, StatusObserved, 2, map[string]any{SummaryCwd: "/work/repo"}),
			OrgLoopResourceChanged, PhaseStarted, "", "", nil, "claude-code:ses_A:started:2"},
		{"frame opened is active/running", receipt(EventFrameOpened, StatusObserved, 3, nil),
			OrgLoopResourceChanged, PhaseActive, "", "running", nil, "claude-code:ses_A:active:3"},
		{"frame ended is active/idle, distinct key", receipt(EventFrameEnded, StatusObserved, 4, nil),
			OrgLoopResourceChanged, PhaseActive, "", "idle", nil, "claude-code:ses_A:active:4"},
		{"ended exit 0", receipt(EventSessionEnded, StatusObserved, 9, endedSummary(ExitFacts{Code: 0})),
			OrgLoopActorStopped, PhaseCompleted, LifecycleSuccess, "exit_code_0", Ptr(0), "claude-code:ses_A:completed:9"},
		{"ended exit 3 (from ledger JSON)", receipt(EventSessionEnded, StatusObserved, 9, roundTrip(endedSummary(ExitFacts{Code: 3}))),
			OrgLoopActorStopped, PhaseFailed, LifecycleFailure, "exit_code_3", Ptr(3), "claude-code:ses_A:failed:9"},
		{"ended by sigterm", receipt(EventSessionEnded, StatusObserved, 9, endedSummary(ExitFacts{Code: -1, Signaled: true, Signal: 15})),
			OrgLoopActorStopped, PhaseStopped, LifecycleCancelled, "sigterm", nil, "claude-code:ses_A:stopped:9"},
		{"ended with only an exit status", receipt(EventSessionEnded, StatusObserved, 9, map[string]any{SummaryExitStatus: 137.0}),
			OrgLoopActorStopped, PhaseStopped, LifecycleCancelled, "sigkill", Ptr(137), "claude-code:ses_A:stopped:9"},
		{"ended with nothing known", receipt(EventSessionEnded, StatusObserved, 9, nil),
			OrgLoopActorStopped, PhaseStopped, LifecycleUnknown, "session_stopped", nil, "claude-code:ses_A:stopped:9"},
	}
	failedStart := receipt(EventSessionStarting, StatusFailed, 1, nil)
	failedStart.FailureClass = Ptr(FailureCapabilityUnsupported)
	tests = append(tests, struct {
		name      string
		r         LifecycleReceipt
		wantType  string
		phase     LifecyclePhase
		outcome   LifecycleOutcome
		reason    string
		exit      *int
		dedupeKey string
	}{"launch refused", failedStart, OrgLoopActorStopped, PhaseFailed, LifecycleFailure, "capability_unsupported", nil, "claude-code:ses_A:failed:1"})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := ProjectOrgLoop(tt.r, OrgLoopOptions{SessionID: "ses_A", Source: "my-agents", Harness: HarnessClaudeCode})
			if err != nil {
				t.Fatal(err)
			}
			if err := AssertLifecycleConformance(ev); err != nil {
				t.Fatalf("not conformant: %v", err)
			}
			lc := ev.Payload.Lifecycle
			if ev.Type != tt.wantType || lc.Phase != tt.phase || lc.Outcome != tt.outcome || lc.Reason != tt.reason || lc.DedupeKey != tt.dedupeKey {
				t.Fatalf("got type=%s lifecycle=%+v", ev.Type, lc)
			}
			if ev.Provenance.PlatformEvent != "session."+string(tt.phase) || ev.Provenance.Platform != "lifeloop" || ev.Source != "my-agents" {
				t.Fatalf("provenance = %+v source=%q", ev.Provenance, ev.Source)
			}
			s := ev.Payload.Session
			if s.ID != "ses_A" || s.Adapter != "claude" || s.Harness != "claude-code" {
				t.Fatalf("session = %+v", s)
			}
			if (tt.exit == nil) != (s.ExitStatus == nil) || (tt.exit != nil && *tt.exit != *s.ExitStatus) {
				t.Fatalf("exit_status = %v, want %v", s.ExitStatus, tt.exit)
			}
			if lc.Terminal && s.EndedAt == "" {
				t.Fatal("terminal event without ended_at")
			}
			if !lc.Terminal && s.EndedAt != "" {
				t.Fatal("non-terminal event with ended_at")
			}
		})
	}

	t.Run("session.ended carries the summary times and cwd", func(t *testing.T) {
		ev, err := ProjectOrgLoop(receipt(EventSessionEnded, StatusObserved, 9, endedSummary(ExitFacts{Code: 0})), OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode})
		if err != nil {
			t.Fatal(err)
		}
		s := ev.Payload.Session
		if s.StartedAt != "2026-05-06T20:00:00Z" || s.EndedAt != "2026-05-06T20:01:30Z" || s.Cwd != "/work/repo" {
			t.Fatalf("session = %+v", s)
		}
	})
	t.Run("no sequence falls back to the receipt id", func(t *testing.T) {
		r := receipt(EventSessionStarted, StatusObserved, 0, nil)
		r.Sequence = nil
		ev, err := ProjectOrgLoop(r, OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode})
		if err != nil || ev.Payload.Lifecycle.DedupeKey != "claude-code:ses_A:started:lfr_1" {
			t.Fatalf("ev=%+v err=%v", ev.Payload.Lifecycle, err)
		}
	})
	t.Run("harness session id when no lifeloop session id", func(t *testing.T) {
		ev, err := ProjectOrgLoop(receipt(EventSessionStarted, StatusObserved, 1, nil), OrgLoopOptions{})
		if err != nil || ev.Payload.Session.ID != "hs-1" {
			t.Fatalf("ev=%+v err=%v", ev.Payload.Session, err)
		}
	})
	t.Run("no session id at all", func(t *testing.T) {
		r := receipt(EventSessionStarted, StatusObserved, 1, nil)
		r.HarnessSessionID = nil
		if _, err := ProjectOrgLoop(r, OrgLoopOptions{}); err == nil || errors.Is(err, ErrNoOrgLoopPhase) {
			t.Fatalf("err = %v, want a missing-session error", err)
		}
	})
	for _, r := range []LifecycleReceipt{
		receipt(EventSupervisorTick, StatusObserved, 5, nil),
		receipt(EventContextPressureObserved, StatusObserved, 5, nil),
		receipt(EventSessionStarting, StatusObserved, 5, nil),
		receipt(EventSessionEnding, StatusObserved, 5, nil),
		func() LifecycleReceipt {
			r := receipt(EventSessionStarted, StatusFailed, 5, nil)
			r.ParentReceiptID = Ptr("lfr_parent")
			r.FailureClass = Ptr(FailureTimeout)
			return r
		}(),
	} {
		t.Run("not projected: "+string(r.Event)+"/"+string(r.Status), func(t *testing.T) {
			if _, err := ProjectOrgLoop(r, OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode}); !errors.Is(err, ErrNoOrgLoopPhase) {
				t.Fatalf("err = %v, want ErrNoOrgLoopPhase", err)
			}
		})
	}
}

func TestCheckOrgLoopJSON(t *testing.T) {
	good := `{"type":"actor.stopped","payload":{"lifecycle":{"phase":"completed","terminal":true,"outcome":"success","dedupe_key":"codex:s:completed:1"},"session":{"id":"s","adapter":"codex","harness":"codex"}},"provenance":{"platform":"lifeloop","platform_event":"session.completed"}}`
	if err := CheckOrgLoopJSON([]byte(good)); err != nil {
		t.Fatalf("good event rejected: %v", err)
	}
	tests := []struct {
		name, from, to, wantErr string
	}{
		{"rule 1: unknown phase", `"phase":"completed"`, `"phase":"done"`, "phase"},
		{"rule 1: missing dedupe key", `,"dedupe_key":"codex:s:completed:1"`, ``, "dedupe_key"},
		{"rule 1: terminal not boolean", `"terminal":true`, `"terminal":"yes"`, "terminal"},
		{"rule 2: missing session id", `"id":"s",`, ``, "session.id"},
		{"rule 2: unknown harness", `"harness":"codex"`, `"harness":"vim"`, "harness"},
		{"rule 3: terminal phase marked non-terminal", `"terminal":true`, `"terminal":false`, "terminal is false"},
		{"rule 4: terminal without outcome", `"outcome":"success",`, ``, "outcome"},
		{"rule 5: terminal as resource.changed", `"type":"actor.stopped"`, `"type":"resource.changed"`, "want \"actor.stopped\""},
		{"provenance missing platform", `"platform":"lifeloop",`, ``, "provenance.platform"},
		{"provenance event mismatch", `"platform_event":"session.completed"`, `"platform_event":"session.failed"`, "platform_event"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := strings.Replace(good, tt.from, tt.to, 1)
			if in == good {
				t.Fatalf("replacement %q did not apply", tt.from)
			}
			err := CheckOrgLoopJSON([]byte(in))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want mention of %q", err, tt.wantErr)
			}
		})
	}
	t.Run("non-terminal phase marked terminal", func(t *testing.T) {
		in := `{"type":"actor.stopped","payload":{"lifecycle":{"phase":"active","terminal":true,"outcome":"success","dedupe_key":"k"},"session":{"id":"s","adapter":"codex","harness":"codex"}},"provenance":{"platform":"lifeloop","platform_event":"session.active"}}`
		if err := CheckOrgLoopJSON([]byte(in)); err == nil {
			t.Fatal("accepted")
		}
	})
}
