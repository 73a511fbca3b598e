package contract

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
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

// ledgerJSON makes a summary look like one read back from a ledger.
func ledgerJSON(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

// TestProjectOrgLoopExitStatusTable runs every row of OrgLoop's
// exit-status table (seed 003) through a session.ended receipt, both as
// the launcher builds its summary and as it reads back from a ledger.
func TestProjectOrgLoopExitStatusTable(t *testing.T) {
	start := time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)
	end := start.Add(90*time.Second + 250*time.Millisecond)
	tests := []struct {
		name    string
		facts   ExitFacts
		phase   LifecyclePhase
		outcome LifecycleOutcome
		reason  string
		status  int
	}{
		{"exit 0", ExitFacts{Code: 0}, PhaseCompleted, LifecycleSuccess, "exit_code_0", 0},
		{"exit 1", ExitFacts{Code: 1}, PhaseFailed, LifecycleFailure, "exit_code_1", 1},
		{"exit 3", ExitFacts{Code: 3}, PhaseFailed, LifecycleFailure, "exit_code_3", 3},
		{"exit 127", ExitFacts{Code: 127}, PhaseFailed, LifecycleFailure, "exit_code_127", 127},
		{"exit 130", ExitFacts{Code: 130}, PhaseStopped, LifecycleCancelled, "sigint", 130},
		{"exit 137", ExitFacts{Code: 137}, PhaseStopped, LifecycleCancelled, "sigkill", 137},
		{"exit 143", ExitFacts{Code: 143}, PhaseStopped, LifecycleCancelled, "sigterm", 143},
		{"exit 129 (128+1)", ExitFacts{Code: 129}, PhaseStopped, LifecycleCancelled, "signal_1", 129},
		{"died of SIGINT", ExitFacts{Code: -1, Signaled: true, Signal: 2}, PhaseStopped, LifecycleCancelled, "sigint", 130},
		{"died of SIGKILL", ExitFacts{Code: -1, Signaled: true, Signal: 9}, PhaseStopped, LifecycleCancelled, "sigkill", 137},
		{"died of SIGTERM", ExitFacts{Code: -1, Signaled: true, Signal: 15}, PhaseStopped, LifecycleCancelled, "sigterm", 143},
		{"died of SIGHUP", ExitFacts{Code: -1, Signaled: true, Signal: 1}, PhaseStopped, LifecycleCancelled, "signal_1", 129},
	}
	for _, tt := range tests {
		for _, fromLedger := range []bool{false, true} {
			name := tt.name
			if fromLedger {
				name += " (from ledger JSON)"
			}
			t.Run(name, func(t *testing.T) {
				sum := SessionEndedSummary(ClassifyExit(tt.facts), tt.facts, start, end, "/work/repo")
				if fromLedger {
					sum = ledgerJSON(sum)
				}
				ev, err := ProjectOrgLoop(receipt(EventSessionEnded, StatusObserved, 9, sum), OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode})
				if err != nil {
					t.Fatal(err)
				}
				if err := AssertLifecycleConformance(ev); err != nil {
					t.Fatalf("not conformant: %v", err)
				}
				lc, p := ev.Payload.Lifecycle, ev.Payload
				if ev.Type != "actor.stopped" || !lc.Terminal || lc.Phase != tt.phase || lc.Outcome != tt.outcome || lc.Reason != tt.reason {
					t.Fatalf("type=%s lifecycle=%+v", ev.Type, lc)
				}
				if want := "claude-code:ses_A:" + string(tt.phase); lc.DedupeKey != want {
					t.Fatalf("dedupe_key = %q, want %q", lc.DedupeKey, want)
				}
				if p.ExitStatus == nil || *p.ExitStatus != tt.status || p.Session.ExitStatus == nil || *p.Session.ExitStatus != tt.status {
					t.Fatalf("exit_status payload=%v session=%v, want %d", p.ExitStatus, p.Session.ExitStatus, tt.status)
				}
				if p.DurationSeconds == nil || *p.DurationSeconds != 90.25 {
					t.Fatalf("duration_seconds = %v, want 90.25", p.DurationSeconds)
				}
				if ev.Provenance.PlatformEvent != "session."+string(tt.phase) {
					t.Fatalf("platform_event = %q", ev.Provenance.PlatformEvent)
				}
			})
		}
	}
}

func TestProjectOrgLoop(t *testing.T) {
	tests := []struct {
		name      string
		r         LifecycleReceipt
		wantType  string
		phase     LifecyclePhase
		outcome   LifecycleOutcome
		reason    string
		dedupeKey string
	}{
		{"started", receipt(EventSessionStarted, StatusObserved, 2, nil),
			OrgLoopResourceChanged, PhaseStarted, "", "", "claude-code:ses_A:started"},
		{"frame opened is active/running", receipt(EventFrameOpened, StatusObserved, 3, nil),
			OrgLoopResourceChanged, PhaseActive, "", "running", "claude-code:ses_A:active:3"},
		{"frame ended is active/idle, distinct key", receipt(EventFrameEnded, StatusObserved, 4, nil),
			OrgLoopResourceChanged, PhaseActive, "", "idle", "claude-code:ses_A:active:4"},
		{"ended with only an exit status", receipt(EventSessionEnded, StatusObserved, 9, map[string]any{SummaryExitStatus: 137.0}),
			OrgLoopActorStopped, PhaseStopped, LifecycleCancelled, "sigkill", "claude-code:ses_A:stopped"},
		{"ended with nothing known", receipt(EventSessionEnded, StatusObserved, 9, nil),
			OrgLoopActorStopped, PhaseStopped, LifecycleUnknown, "session_stopped", "claude-code:ses_A:stopped"},
	}
	failedStart := receipt(EventSessionStarting, StatusFailed, 1, nil)
	failedStart.FailureClass = Ptr(FailureCapabilityUnsupported)
	// An emit-only session's end (manual_skill, no exit known) is the
	// reporter saying the session finished: completed, as HCP and
	// session.json tell it.
	emitted := receipt(EventSessionEnded, StatusObserved, 4, nil)
	emitted.IntegrationMode = ModeManualSkill
	tests = append(tests, struct {
		name      string
		r         LifecycleReceipt
		wantType  string
		phase     LifecyclePhase
		outcome   LifecycleOutcome
		reason    string
		dedupeKey string
	}{"an emitted end", emitted, OrgLoopActorStopped, PhaseCompleted, LifecycleSuccess, "session_ended", "claude-code:ses_A:completed"})
	// A hook-only session's end (native_hook: the harness's own end hook
	// said so, no wrapper saw a process exit) is completed likewise,
	// whether its receipt carries the classification host-hook records
	// or none at all (a ledger written before it did).
	hooked := receipt(EventSessionEnded, StatusObserved, 6, map[string]any{SummaryHarnessReason: "other"})
	hooked.IntegrationMode = ModeNativeHook
	recorded := receipt(EventSessionEnded, StatusObserved, 6, ReportedEndSummary("other", time.Unix(1778100000, 0), time.Unix(1778100012, 0), "/work/repo"))
	recorded.IntegrationMode = ModeNativeHook
	for _, c := range []struct {
		name string
		r    LifecycleReceipt
	}{{"a hook-only end, unclassified", hooked}, {"a hook-only end, as host-hook records it", recorded}} {
		tests = append(tests, struct {
			name      string
			r         LifecycleReceipt
			wantType  string
			phase     LifecyclePhase
			outcome   LifecycleOutcome
			reason    string
			dedupeKey string
		}{c.name, c.r, OrgLoopActorStopped, PhaseCompleted, LifecycleSuccess, "session_ended", "claude-code:ses_A:completed"})
	}
	tests = append(tests, struct {
		name      string
		r         LifecycleReceipt
		wantType  string
		phase     LifecyclePhase
		outcome   LifecycleOutcome
		reason    string
		dedupeKey string
	}{"launch refused", failedStart, OrgLoopActorStopped, PhaseFailed, LifecycleFailure, "capability_unsupported", "claude-code:ses_A:failed"})

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev, err := ProjectOrgLoop(tt.r, OrgLoopOptions{SessionID: "ses_A", Source: "my-agents", Harness: HarnessClaudeCode, Cwd: "/work/repo"})
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
			want := OrgLoopProvenance{Platform: "lifeloop", PlatformEvent: "session." + string(tt.phase), Author: "lifeloop", AuthorType: "bot", SessionID: "ses_A", WorkingDirectory: "/work/repo"}
			if ev.Provenance != want || ev.Source != "my-agents" {
				t.Fatalf("provenance = %+v source=%q", ev.Provenance, ev.Source)
			}
			// sha256("lifeloop.orgloop.event\x00lfr_1") and ("…trace\x00ses_A"), first 8 bytes.
			if ev.ID != "evt_40bc01b96f2b4b85" || ev.Timestamp != "2026-05-06T20:40:00.000Z" || ev.TraceID != "trc_a791dbce60b923d3" {
				t.Fatalf("id=%s timestamp=%s trace_id=%s", ev.ID, ev.Timestamp, ev.TraceID)
			}
			s, p := ev.Payload.Session, ev.Payload
			if s.ID != "ses_A" || s.Adapter != "claude" || s.Harness != "claude-code" || s.Cwd != "/work/repo" {
				t.Fatalf("session = %+v", s)
			}
			if p.SessionID != "ses_A" || p.WorkingDirectory != "/work/repo" {
				t.Fatalf("payload session_id=%q working_directory=%q", p.SessionID, p.WorkingDirectory)
			}
			if lc.Terminal != (s.EndedAt != "") || (!lc.Terminal && p.DurationSeconds != nil) {
				t.Fatalf("terminal=%v ended_at=%q duration=%v", lc.Terminal, s.EndedAt, p.DurationSeconds)
			}
			if !lc.Terminal && (p.ExitStatus != nil || s.ExitStatus != nil) {
				t.Fatal("non-terminal event with an exit status")
			}
		})
	}

	t.Run("encoded fields", func(t *testing.T) {
		start := time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)
		sum := SessionEndedSummary(ClassifyExit(ExitFacts{Code: 0}), ExitFacts{Code: 0}, start, start.Add(90*time.Second), "/work/repo")
		for _, tc := range []struct {
			r                                  LifecycleReceipt
			top, prov, payload, session, cycle []string
		}{
			{receipt(EventSessionStarted, StatusObserved, 2, nil),
				[]string{"id", "timestamp", "source", "type", "provenance", "payload", "trace_id"},
				[]string{"platform", "platform_event", "author", "author_type", "session_id", "working_directory"},
				[]string{"lifecycle", "session", "session_id", "working_directory"},
				[]string{"id", "adapter", "harness", "started_at"},
				[]string{"phase", "terminal", "dedupe_key"}},
			{receipt(EventSessionEnded, StatusObserved, 9, sum),
				[]string{"id", "timestamp", "source", "type", "provenance", "payload", "trace_id"},
				[]string{"platform", "platform_event", "author", "author_type", "session_id", "working_directory"},
				[]string{"lifecycle", "session", "session_id", "working_directory", "duration_seconds", "exit_status"},
				[]string{"id", "adapter", "harness", "cwd", "started_at", "ended_at", "exit_status"},
				[]string{"phase", "terminal", "outcome", "reason", "dedupe_key"}},
		} {
			ev, err := ProjectOrgLoop(tc.r, OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(ev)
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			pl := m["payload"].(map[string]any)
			for _, c := range []struct {
				what string
				obj  any
				want []string
			}{{"event", m, tc.top}, {"provenance", m["provenance"], tc.prov}, {"payload", pl, tc.payload}, {"session", pl["session"], tc.session}, {"lifecycle", pl["lifecycle"], tc.cycle}} {
				got := slices.Sorted(maps.Keys(c.obj.(map[string]any)))
				if want := slices.Sorted(slices.Values(c.want)); !slices.Equal(got, want) {
					t.Errorf("%s %s keys = %v, want %v", tc.r.Event, c.what, got, want)
				}
			}
			if m["source"] != "codex" {
				t.Errorf("default source = %v, want the harness", m["source"])
			}
		}
	})
	t.Run("session.ended carries the summary times and cwd", func(t *testing.T) {
		start := time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)
		sum := SessionEndedSummary(ClassifyExit(ExitFacts{Code: 0}), ExitFacts{Code: 0}, start, start.Add(90*time.Second), "/work/repo")
		ev, err := ProjectOrgLoop(receipt(EventSessionEnded, StatusObserved, 9, sum), OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode, Cwd: "/elsewhere"})
		if err != nil {
			t.Fatal(err)
		}
		s := ev.Payload.Session
		if s.StartedAt != "2026-05-06T20:00:00Z" || s.EndedAt != "2026-05-06T20:01:30Z" || s.Cwd != "/work/repo" || ev.Payload.WorkingDirectory != "/work/repo" {
			t.Fatalf("session = %+v", s)
		}
	})
	t.Run("ids are derived: same receipt same id, other receipt other id, one trace per session", func(t *testing.T) {
		o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode}
		a, _ := ProjectOrgLoop(receipt(EventSessionStarted, StatusObserved, 2, nil), o)
		b, _ := ProjectOrgLoop(receipt(EventSessionStarted, StatusObserved, 2, nil), o)
		r := receipt(EventSessionEnded, StatusObserved, 9, nil)
		r.ReceiptID = "lfr_2"
		c, _ := ProjectOrgLoop(r, o)
		o.SessionID = "ses_B"
		d, _ := ProjectOrgLoop(r, o)
		if a.ID != b.ID || a.ID == c.ID || a.TraceID != c.TraceID || c.TraceID == d.TraceID {
			t.Fatalf("ids %s %s %s, traces %s %s %s", a.ID, b.ID, c.ID, a.TraceID, c.TraceID, d.TraceID)
		}
	})
	t.Run("active without a sequence uses the receipt id", func(t *testing.T) {
		r := receipt(EventFrameOpened, StatusObserved, 0, nil)
		r.Sequence = nil
		ev, err := ProjectOrgLoop(r, OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode})
		if err != nil || ev.Payload.Lifecycle.DedupeKey != "claude-code:ses_A:active:lfr_1" {
			t.Fatalf("ev=%+v err=%v", ev.Payload.Lifecycle, err)
		}
	})
	t.Run("harness session id when no lifeloop session id", func(t *testing.T) {
		ev, err := ProjectOrgLoop(receipt(EventSessionStarted, StatusObserved, 1, nil), OrgLoopOptions{})
		if err != nil || ev.Payload.Session.ID != "hs-1" || ev.Payload.Lifecycle.DedupeKey != "other:hs-1:started" || ev.Source != "other" {
			t.Fatalf("ev=%+v err=%v", ev.Payload, err)
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
		func() LifecycleReceipt { // a client's delivery failure of session.ended
			r := receipt(EventSessionEnded, StatusFailed, 10, nil)
			r.ParentReceiptID = Ptr("lfr_parent")
			r.FailureClass = Ptr(FailureTransportError)
			return r
		}(),
		func() LifecycleReceipt { // an idempotency conflict
			r := receipt(EventSessionEnded, StatusFailed, 10, map[string]any{SummaryExitStatus: 0.0})
			r.ParentReceiptID = Ptr("lfr_parent")
			r.FailureClass = Ptr(FailureStateConflict)
			return r
		}(),
		func() LifecycleReceipt { // an idempotency conflict in an emit-only session: no parent
			r := receipt(EventSessionEnded, StatusFailed, 2, nil)
			r.IntegrationMode = ModeManualSkill
			r.FailureClass, r.RetryClass = Ptr(FailureStateConflict), Ptr(RetryAfterReread)
			r.Warnings = []Warning{{Code: "duplicate_id_conflict", Message: "idempotency key \"K1\" was already recorded at sequence 1 with different content"}}
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
	good := `{"id":"evt_0123456789abcdef","timestamp":"2026-05-06T20:00:00.000Z","source":"my-agents","trace_id":"trc_0123456789abcdef","type":"actor.stopped","payload":{"lifecycle":{"phase":"completed","terminal":true,"outcome":"success","dedupe_key":"codex:s:completed"},"session":{"id":"s","adapter":"codex","harness":"codex"}},"provenance":{"platform":"lifeloop","platform_event":"session.completed"}}`
	if err := CheckOrgLoopJSON([]byte(good)); err != nil {
		t.Fatalf("good event rejected: %v", err)
	}
	tests := []struct {
		name, from, to, wantErr string
	}{
		{"rule 1: unknown phase", `"phase":"completed"`, `"phase":"done"`, "phase"},
		{"rule 1: missing dedupe key", `,"dedupe_key":"codex:s:completed"`, ``, "dedupe_key"},
		{"dedupe key with a suffix", `"codex:s:completed"`, `"codex:s:completed:9"`, "dedupe_key"},
		{"dedupe key of another harness", `"codex:s:completed"`, `"claude-code:s:completed"`, "dedupe_key"},
		{"no id", `"id":"evt_0123456789abcdef",`, ``, "id must"},
		{"id not evt_", `"evt_0123456789abcdef"`, `"ev_0123456789abcdef"`, "id must"},
		{"id uppercase hex", `"evt_0123456789abcdef"`, `"evt_0123456789ABCDEF"`, "id must"},
		{"no timestamp", `"timestamp":"2026-05-06T20:00:00.000Z",`, ``, "timestamp"},
		{"timestamp not UTC", `"2026-05-06T20:00:00.000Z"`, `"2026-05-06T22:00:00.000+02:00"`, "timestamp"},
		{"empty source", `"source":"my-agents"`, `"source":""`, "source"},
		{"bad trace id", `"trc_0123456789abcdef"`, `"trc_xyz"`, "trace_id"},
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
		in := `{"id":"evt_0123456789abcdef","timestamp":"2026-05-06T20:00:00.000Z","source":"s","type":"actor.stopped","payload":{"lifecycle":{"phase":"active","terminal":true,"outcome":"success","dedupe_key":"k"},"session":{"id":"s","adapter":"codex","harness":"codex"}},"provenance":{"platform":"lifeloop","platform_event":"session.active"}}`
		if err := CheckOrgLoopJSON([]byte(in)); err == nil {
			t.Fatal("accepted")
		}
	})
}

// TestProjectOrgLoopFailedLaunch: a launch that fails after
// session.starting (126, 127) records a failed session.ended with a
// parent; it is the session's one terminal event.
func TestProjectOrgLoopFailedLaunch(t *testing.T) {
	for _, tc := range []struct {
		code   float64
		reason string
		fc     FailureClass
	}{{127, "command_not_found", FailureAdapterUnavailable}, {126, "not_executable", FailureAdapterUnavailable}, {1, "", FailureInternalError}} {
		sum := map[string]any{SummaryExitStatus: tc.code}
		if tc.reason != "" {
			sum[SummaryReason] = tc.reason
		}
		r := receipt(EventSessionEnded, StatusFailed, 2, sum)
		r.ParentReceiptID = Ptr("lfr_starting")
		r.FailureClass = Ptr(tc.fc)
		ev, err := ProjectOrgLoop(r, OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex})
		if err != nil {
			t.Fatal(err)
		}
		if err := AssertLifecycleConformance(ev); err != nil {
			t.Fatal(err)
		}
		want := tc.reason
		if want == "" {
			want = string(tc.fc)
		}
		lc := ev.Payload.Lifecycle
		if ev.Type != OrgLoopActorStopped || lc.Phase != PhaseFailed || lc.Outcome != LifecycleFailure || lc.Reason != want ||
			lc.DedupeKey != "codex:ses_A:failed" || ev.Payload.ExitStatus == nil || *ev.Payload.ExitStatus != int(tc.code) {
			t.Fatalf("exit %v: %+v exit_status=%v", tc.code, lc, ev.Payload.ExitStatus)
		}
	}
}

// TestProjectOrgLoopRenewalKeys: the stop and start of renewal N carry
// <session>.r<N> in their dedupe keys; the first start and the last stop
// keep the session's own.
func TestProjectOrgLoopRenewalKeys(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessPi}
	step := func(ev Event, n float64, extra map[string]any) LifecycleReceipt {
		sum := map[string]any{"reason": "renewal", "renewal_attempt": n, "renewal_step": "x"}
		for k, v := range extra {
			sum[k] = v
		}
		return receipt(ev, StatusObserved, 5, sum)
	}
	stopped := map[string]any{"phase": "stopped", "outcome": "cancelled", "exit_code": 0.0}
	keys := map[string]bool{}
	for _, r := range []LifecycleReceipt{
		receipt(EventSessionStarted, StatusObserved, 2, nil),
		step(EventSessionEnded, 1, stopped), step(EventSessionStarted, 1, nil),
		step(EventSessionEnded, 2, stopped), step(EventSessionStarted, 2, nil),
		receipt(EventSessionEnded, StatusObserved, 20, map[string]any{SummaryExitStatus: 0.0}),
	} {
		ev, err := ProjectOrgLoop(r, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := AssertLifecycleConformance(ev); err != nil {
			t.Fatal(err)
		}
		keys[ev.Payload.Lifecycle.DedupeKey] = true
	}
	want := []string{"pi:ses_A:started", "pi:ses_A.r1:stopped", "pi:ses_A.r1:started", "pi:ses_A.r2:stopped", "pi:ses_A.r2:started", "pi:ses_A:completed"}
	for _, k := range want {
		if !keys[k] {
			t.Errorf("no key %s in %v", k, keys)
		}
	}
	if len(keys) != len(want) {
		t.Fatalf("keys = %v", keys)
	}
}

// TestOrgLoopSwitchKeys: the stop and start of a switch to a new harness
// session inside one process have keys of their own, so OrgLoop sees
// two sessions started and stopped.
func TestOrgLoopSwitchKeys(t *testing.T) {
	o := OrgLoopOptions{SessionID: "s1", Harness: "claude-code"}
	sw := map[string]any{SummaryReason: HarnessSessionSwitched, SummarySwitch: 1.0, SummaryPhase: "stopped", SummaryOutcome: "success"}
	var keys []string
	for _, r := range []LifecycleReceipt{
		{ReceiptID: "r1", Event: EventSessionStarted},
		{ReceiptID: "r2", Event: EventSessionEnded, TelemetrySummary: sw},
		{ReceiptID: "r3", Event: EventSessionStarted, TelemetrySummary: map[string]any{SummaryReason: HarnessSessionSwitched, SummarySwitch: 1}},
		{ReceiptID: "r4", Event: EventSessionEnded, TelemetrySummary: map[string]any{SummaryPhase: "completed", SummaryOutcome: "success"}},
	} {
		ev, err := ProjectOrgLoop(r, o)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, ev.Payload.Lifecycle.DedupeKey)
	}
	want := []string{"claude-code:s1:started", "claude-code:s1.s1:stopped", "claude-code:s1.s1:started", "claude-code:s1:completed"}
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("keys %v, want %v", keys, want)
	}
}

// TestProjectOrgLoopRelaunchThatDied: the failed session.ended of a
// relaunch that exited before it was ready posts nothing (that relaunch
// never started); the harness started again as launched is renewal N's
// started.
func TestProjectOrgLoopRelaunchThatDied(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex}
	died := receipt(EventSessionEnded, StatusFailed, 6, map[string]any{"reason": "renewal", "renewal_attempt": 1.0,
		SummaryRenewalStep: RenewalStepRelaunchFailed, "phase": "failed", "outcome": "failure", "exit_code": 42.0})
	died.FailureClass = Ptr(FailureAdapterUnavailable)
	died.ParentReceiptID = Ptr("lfr_5")
	if ev, err := ProjectOrgLoop(died, o); !errors.Is(err, ErrNoOrgLoopPhase) {
		t.Fatalf("the dead relaunch's end projected: %+v %v", ev, err)
	}
	fallback := receipt(EventSessionStarted, StatusObserved, 8, map[string]any{"reason": "renewal", "renewal_attempt": 1.0, SummaryRenewalStep: RenewalStepFallbackStarted})
	ev, err := ProjectOrgLoop(fallback, o)
	if err != nil || ev.Payload.Lifecycle.DedupeKey != "codex:ses_A.r1:started" {
		t.Fatalf("the fallback's start: %+v %v", ev.Payload.Lifecycle, err)
	}
}
