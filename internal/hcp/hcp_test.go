package hcp

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

const sid = "ses_01JTEST"

type rb struct{ seq uint64 }

// next builds the next receipt of a test ledger.
func (b *rb) next(ev contract.Event, sum map[string]any, mod ...func(*contract.LifecycleReceipt)) contract.LifecycleReceipt {
	b.seq++
	s := b.seq
	r := contract.LifecycleReceipt{
		SchemaVersion: contract.ReceiptSchemaVersion, ReceiptID: "lfr_" + strings.Repeat("0", 4) + string(rune('A'+s)), ClientID: "lifeloop", AdapterID: "generic",
		InvocationID: "inv_1", Event: ev, EventID: "evt", Sequence: &s, IntegrationMode: contract.ModeLauncherWrapper,
		Status: contract.StatusObserved, AtEpochS: 1778100000 + int64(s), TelemetrySummary: sum,
	}
	for _, m := range mod {
		m(&r)
	}
	return r
}

func project(p *Projector, rs []contract.LifecycleReceipt) []Envelope {
	var out []Envelope
	for _, r := range rs {
		out = append(out, p.Project(r)...)
	}
	return out
}

// data returns the events' "type:key=value" summaries for compact checks.
func types(es []Envelope) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Payload.EventType)
	}
	return out
}

func checkEnvelopes(t *testing.T, es []Envelope) {
	t.Helper()
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i, e := range es {
		if e.Payload.Sequence != uint64(i+1) {
			t.Errorf("event %d (%s): sequence %d, want %d (gapless from 1)", i, e.Payload.EventType, e.Payload.Sequence, i+1)
		}
		if e.HCPVersion != Version || e.Type != "event" || e.SessionID != sid {
			t.Errorf("event %d: envelope %+v", i, e)
		}
		if !uuid.MatchString(e.MessageID) || seen[e.MessageID] {
			t.Errorf("event %d: message_id %q malformed or repeated", i, e.MessageID)
		}
		seen[e.MessageID] = true
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); err != nil {
			t.Errorf("event %d does not decode: %v", i, err)
		}
	}
}

func failedWith(fc contract.FailureClass, rc contract.RetryClass) func(*contract.LifecycleReceipt) {
	return func(r *contract.LifecycleReceipt) {
		r.Status, r.FailureClass, r.RetryClass = contract.StatusFailed, &fc, &rc
	}
}

// TestSessionCreatedAndClosed: a plain session is created PENDING, runs,
// and is closed with the final state its session.ended reports; a
// harness killed by a signal nobody asked lifeloop to send is FAILED (no
// caller abort, so no ABORTING).
func TestSessionCreatedAndClosed(t *testing.T) {
	for _, c := range []struct {
		sum   map[string]any
		final string
	}{
		{map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}, StateCompleted},
		{map[string]any{"phase": "failed", "outcome": "failure", "reason": "exit_code_3"}, StateFailed},
		{map[string]any{"phase": "stopped", "outcome": "cancelled", "reason": "sigkill"}, StateFailed},
		{map[string]any{"phase": "failed", "outcome": "failure", "reason": "timeout"}, StateFailed},
		{nil, StateCompleted},
	} {
		var b rb
		rs := []contract.LifecycleReceipt{
			b.next(contract.EventSessionStarting, nil),
			b.next(contract.EventSessionStarted, map[string]any{"pid": 42}),
			b.next(contract.EventSupervisorTick, map[string]any{"state": "running", "trigger": "interval"}),
		}
		if c.sum["reason"] == "timeout" {
			rs = append(rs, b.next(contract.EventSessionEnding, map[string]any{"reason": "timeout"}))
		}
		rs = append(rs, b.next(contract.EventSessionEnded, c.sum),
			b.next(contract.EventSupervisorTick, map[string]any{"state": "running"})) // after the close: nothing
		es := project(NewProjector(sid), rs)
		checkEnvelopes(t, es)
		checkSeed001(t, es)
		if got, want := types(es), []string{SessionCreated, StateChanged, StateChanged, SessionClosed}; !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: events %v, want %v", c.final, got, want)
		}
		if d := es[0].Payload.Data; d["state"] != StatePending || d["risk_level"] != nil || d["session_token"] != nil {
			t.Errorf("session_created data %v: want state PENDING and no invented risk_level/session_token", d)
		}
		if d := es[1].Payload.Data; d["from_state"] != StatePending || d["to_state"] != StateRunning || d["reason"] != "started" {
			t.Errorf("first state_changed %v", d)
		}
		reason := c.sum["reason"]
		if reason == nil {
			reason = "session_ended"
		}
		if d := es[2].Payload.Data; d["from_state"] != StateRunning || d["to_state"] != c.final || d["reason"] != reason {
			t.Errorf("final state_changed %v, want → %s", d, c.final)
		}
		if d := es[3].Payload.Data; d["final_state"] != c.final || d["reason"] != reason {
			t.Errorf("session_closed %v, want %s", d, c.final)
		}
		if es[0].Timestamp != "2026-05-06T20:40:01.000Z" {
			t.Errorf("timestamp %s", es[0].Timestamp)
		}
	}
}

// TestSessionCreatedKnownRiskAndToken: risk_level and session_token are
// reported when the receipt carries them.
func TestSessionCreatedKnownRiskAndToken(t *testing.T) {
	var b rb
	es := NewProjector(sid).Project(b.next(contract.EventSessionStarting, map[string]any{"risk_level": "R2", "session_token": "tok"}))
	if len(es) != 1 || es[0].Payload.Data["risk_level"] != "R2" || es[0].Payload.Data["session_token"] != "tok" {
		t.Fatalf("got %+v", es)
	}
}

// TestStateChangedPauseResumeAbort: ticks carrying a state change and an
// abort's session.ending are transitions; ticks without a change are not.
func TestStateChangedPauseResumeAbort(t *testing.T) {
	var b rb
	rs := []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventSupervisorTick, map[string]any{"state": "paused", "trigger": "state_change"}),
		b.next(contract.EventSupervisorTick, map[string]any{"state": "paused", "trigger": "interval"}),
		b.next(contract.EventSupervisorTick, map[string]any{"state": "running", "trigger": "state_change"}),
		b.next(contract.EventSessionEnding, map[string]any{"reason": "abort", "signal": "TERM"}),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "stopped", "outcome": "cancelled", "reason": "abort"}),
	}
	es := project(NewProjector(sid), rs)
	checkEnvelopes(t, es)
	var got []string
	for _, e := range es {
		if e.Payload.EventType == StateChanged {
			got = append(got, e.Payload.Data["from_state"].(string)+">"+e.Payload.Data["to_state"].(string)+":"+e.Payload.Data["reason"].(string))
		}
	}
	want := []string{"PENDING>RUNNING:started", "RUNNING>PAUSED:state_change", "PAUSED>RUNNING:state_change", "RUNNING>ABORTING:abort", "ABORTING>ABORTED:abort"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("transitions %v, want %v", got, want)
	}
}

// TestProgressFrames: each frame receipt is one progress event.
func TestProgressFrames(t *testing.T) {
	var b rb
	p := NewProjector(sid)
	project(p, []contract.LifecycleReceipt{b.next(contract.EventSessionStarting, nil), b.next(contract.EventSessionStarted, nil)})
	var es []Envelope
	for _, ev := range []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded} {
		es = append(es, p.Project(b.next(ev, map[string]any{"frame_id": "turn-1"}))...)
	}
	if len(es) != 4 {
		t.Fatalf("%d events, want 4", len(es))
	}
	for i, stage := range []string{"frame.opening", "frame.opened", "frame.ending", "frame.ended"} {
		d := es[i].Payload.Data
		if es[i].Payload.EventType != Progress || d["stage"] != stage || d["frame_id"] != "turn-1" || d["message"] != "frame turn-1 "+strings.TrimPrefix(stage, "frame.") {
			t.Errorf("event %d: %+v", i, es[i].Payload)
		}
		if es[i].Payload.Sequence != uint64(3+i) {
			t.Errorf("event %d: sequence %d", i, es[i].Payload.Sequence)
		}
	}
}

// TestWarningAndError: degradations, gap receipts and receipt warnings
// are warnings; failed receipts are errors, recoverable unless
// do_not_retry.
func TestWarningAndError(t *testing.T) {
	var b rb
	p := NewProjector(sid)
	project(p, []contract.LifecycleReceipt{b.next(contract.EventSessionStarting, nil), b.next(contract.EventSessionStarted, nil)})
	ev := "hook unreachable"
	es := p.Project(b.next(contract.EventCapabilityDegraded, nil, func(r *contract.LifecycleReceipt) {
		r.Status = contract.StatusDegraded
		r.CapabilityDegradations = []contract.CapabilityDegradation{{Capability: "events.frame.opening", PreviousSupport: contract.SupportNative, CurrentSupport: contract.SupportUnavailable, Evidence: &ev}}
	}))
	if len(es) != 1 || es[0].Payload.EventType != Warning || es[0].Payload.Data["code"] != "capability_degraded" ||
		es[0].Payload.Data["details"].(map[string]any)["evidence"] != ev {
		t.Fatalf("degradation: %+v", es)
	}
	es = p.Project(b.next(contract.EventReceiptGapDetected, map[string]any{"expected": 4, "got": 6}))
	if len(es) != 1 || es[0].Payload.EventType != Warning || es[0].Payload.Data["code"] != "receipt_gap_detected" {
		t.Fatalf("gap: %+v", es)
	}
	es = p.Project(b.next(contract.EventSupervisorTick, map[string]any{"state": "running"}, func(r *contract.LifecycleReceipt) {
		r.Warnings = []contract.Warning{{Code: "sink_dropped", Message: "dropped 3"}}
	}))
	if len(es) != 1 || es[0].Payload.Data["code"] != "sink_dropped" || es[0].Payload.Data["message"] != "dropped 3" {
		t.Fatalf("receipt warning: %+v", es)
	}
	es = p.Project(b.next(contract.EventFrameOpening, map[string]any{"frame_id": "t"}, failedWith(contract.FailureTransportError, contract.RetrySafe)))
	if len(es) != 1 || es[0].Payload.EventType != Error || es[0].Payload.Data["code"] != "transport_error" || es[0].Payload.Data["recoverable"] != true {
		t.Fatalf("recoverable error: %+v", es)
	}
	es = p.Project(b.next(contract.EventFrameOpening, map[string]any{"frame_id": "u"}, failedWith(contract.FailurePayloadRejected, contract.RetryDoNot)))
	if len(es) != 1 || es[0].Payload.Data["recoverable"] != false {
		t.Fatalf("unrecoverable error: %+v", es)
	}
	if p.Sequence() != 7 {
		t.Fatalf("sequence %d, want 7", p.Sequence())
	}
}

// TestLaunchFailed: a launch that fails after session.starting (126,
// 127) is an error, then PENDING → REJECTED with the reason, and closed.
func TestLaunchFailed(t *testing.T) {
	var b rb
	es := project(NewProjector(sid), []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionEnded, map[string]any{"exit_status": 127, "reason": "command_not_found"}, failedWith(contract.FailureAdapterUnavailable, contract.RetryAfterReconfigure)),
	})
	checkEnvelopes(t, es)
	checkSeed001(t, es)
	if got, want := types(es), []string{SessionCreated, Error, StateChanged, SessionClosed}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if d := es[2].Payload.Data; d["from_state"] != StatePending || d["to_state"] != StateRejected || d["reason"] != "command_not_found" || es[3].Payload.Data["final_state"] != StateRejected {
		t.Fatalf("%+v %+v", es[2].Payload, es[3].Payload)
	}
}

// renewalLedger is a session with one renewal carrying one payload.
func renewalLedger(recovered bool) []contract.LifecycleReceipt {
	var b rb
	step := func(s string) map[string]any {
		m := map[string]any{"reason": "renewal", "renewal_attempt": 1, "renewal_step": s, "resume": true}
		if recovered {
			m["renewal_recovered"] = true
		}
		return m
	}
	ended := step("ended")
	ended["phase"], ended["outcome"] = "stopped", "cancelled"
	return []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventFrameOpened, map[string]any{"frame_id": "turn-1"}),
		b.next(contract.EventSessionEnding, step("ending")),
		b.next(contract.EventSessionEnded, ended),
		b.next(contract.EventSessionStarting, step("starting")),
		b.next(contract.EventSessionStarted, step("started"), func(r *contract.LifecycleReceipt) {
			r.PayloadReceipts = []contract.PayloadReceipt{{PayloadID: "pay_1", PayloadKind: "continuation", Placement: contract.PlacementPrePromptFrame, Status: contract.PlacementOutcomeDelivered, ByteSize: 10}}
		}),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}),
	}
}

// TestCheckpointCreatedOnRenewal: a renewal pauses the session, its
// continuation payloads are checkpoints, and the relaunch resumes it.
func TestCheckpointCreatedOnRenewal(t *testing.T) {
	es := project(NewProjector(sid), renewalLedger(false))
	checkEnvelopes(t, es)
	want := []string{SessionCreated, StateChanged, Progress, StateChanged, CheckpointCreated, StateChanged, StateChanged, SessionClosed}
	if got := types(es); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if d := es[3].Payload.Data; d["to_state"] != StatePaused || d["reason"] != "renewal" {
		t.Errorf("pause %v", d)
	}
	if d := es[4].Payload.Data; d["checkpoint_id"] != "pay_1" || d["resumable"] != true || d["created_at"] == nil {
		t.Errorf("checkpoint %v", d)
	}
	if d := es[5].Payload.Data; d["from_state"] != StatePaused || d["to_state"] != StateRunning || d["reason"] != "renewed" {
		t.Errorf("resume %v", d)
	}
	es = project(NewProjector(sid), renewalLedger(true))
	if d := es[5].Payload.Data; d["reason"] != "recovered_from_checkpoint" {
		t.Errorf("recovered resume %v", d)
	}
}

// TestRenewalSurvivesTicks: a tick recorded while a renewal stops and
// restarts the harness — saying running (as ledgers before issue 51 did)
// or renewing — never resumes the session: whatever the timing, the
// relaunch's session.started yields checkpoint_created for its payload
// and PAUSED → RUNNING, reason renewed.
func TestRenewalSurvivesTicks(t *testing.T) {
	base := renewalLedger(false)
	want := []string{"PENDING>RUNNING:started", "RUNNING>PAUSED:renewal", "PAUSED>RUNNING:renewed", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"}
	// The renewal runs from its session.ending (index 3) to its
	// session.started (index 6): a tick after each receipt in between.
	for _, state := range []string{"running", "renewing", "paused"} {
		for at := 3; at <= 5; at++ {
			rs := make([]contract.LifecycleReceipt, 0, len(base)+1)
			rs = append(rs, base[:at+1]...)
			rs = append(rs, base[at])
			rs[len(rs)-1].Event, rs[len(rs)-1].ReceiptID = contract.EventSupervisorTick, "lfr_tick"
			rs[len(rs)-1].TelemetrySummary = map[string]any{"trigger": "interval", "state": state}
			rs = append(rs, base[at+1:]...)
			for i := range rs {
				n := uint64(i + 1)
				rs[i].Sequence = &n
			}
			es := project(NewProjector(sid), rs)
			checkSeed001(t, es)
			if got := transitions(es); !reflect.DeepEqual(got, want) {
				t.Errorf("tick %q after receipt %d: transitions %v, want %v", state, at, got, want)
			}
			if n := count(types(es), CheckpointCreated); n != 1 {
				t.Errorf("tick %q after receipt %d: %d checkpoint_created, want 1 (the delivered payload)", state, at, n)
			}
		}
	}
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// TestDeterministicReplayAndResume: a replay yields identical envelopes,
// a receipt given twice yields nothing the second time, and a projector
// fed the first receipts then the rest matches one fed all at once.
func TestDeterministicReplayAndResume(t *testing.T) {
	rs := renewalLedger(false)
	a, _ := json.Marshal(project(NewProjector(sid), rs))
	b, _ := json.Marshal(project(NewProjector(sid), rs))
	if string(a) != string(b) {
		t.Fatal("two projections of one ledger differ")
	}
	p := NewProjector(sid)
	first := project(p, rs[:4])
	if again := project(p, rs[:4]); len(again) != 0 {
		t.Fatalf("repeated receipts yielded %d events", len(again))
	}
	c, _ := json.Marshal(append(first, project(p, rs[4:])...))
	if string(a) != string(c) {
		t.Fatalf("resumed projection differs:\n%s\n%s", a, c)
	}
}

func TestDecodeRefuses(t *testing.T) {
	good := `{"hcp_version":"1.0","message_id":"m","timestamp":"t","session_id":"s","type":"event","payload":{"event_type":"progress","sequence":1,"data":{}}}`
	if _, err := Decode([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`not json`,
		strings.Replace(good, `"1.0"`, `"2.0"`, 1),
		strings.Replace(good, `"event"`, `"task_submit"`, 1),
		strings.Replace(good, `"session_id":"s"`, `"session_id":""`, 1),
		strings.Replace(good, `"sequence":1`, `"sequence":0`, 1),
		strings.Replace(good, `"progress"`, `"made_up"`, 1),
		strings.Replace(good, `"message_id":"m"`, `"message_id":""`, 1),
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted", bad)
		}
	}
}

// TestRejectedByNegotiation: a refused capability negotiation records
// only a failed session.starting; the session is rejected and closed.
func TestRejectedByNegotiation(t *testing.T) {
	var b rb
	es := NewProjector(sid).Project(b.next(contract.EventSessionStarting, nil, failedWith(contract.FailureCapabilityUnsupported, contract.RetryDoNot), func(r *contract.LifecycleReceipt) {
		r.Warnings = []contract.Warning{{Code: "capability_unsupported", Message: "lifecycle_events.context.compacted: unavailable"}}
	}))
	checkEnvelopes(t, es)
	if got, want := types(es), []string{SessionCreated, Error, Warning, StateChanged, SessionClosed}; !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if d := es[3].Payload.Data; d["from_state"] != StatePending || d["to_state"] != StateRejected || d["reason"] != "capability_unsupported" {
		t.Errorf("state_changed %v", d)
	}
	if d := es[4].Payload.Data; d["final_state"] != StateRejected {
		t.Errorf("session_closed %v", d)
	}
}

// checkSeed001 fails the test when es breaks seed 001's state machine.
func checkSeed001(t *testing.T, es []Envelope) {
	t.Helper()
	if err := CheckStream(es); err != nil {
		t.Fatalf("%v\n%v", err, transitions(es))
	}
}

func transitions(es []Envelope) []string {
	var out []string
	for _, e := range es {
		switch e.Payload.EventType {
		case StateChanged:
			out = append(out, e.Payload.Data["from_state"].(string)+">"+e.Payload.Data["to_state"].(string)+":"+e.Payload.Data["reason"].(string))
		case SessionClosed:
			out = append(out, "closed:"+e.Payload.Data["final_state"].(string))
		}
	}
	return out
}

// TestSeed001StateMachine walks every receipt sequence lifeloop records
// (plain ends, stops, signals, timeouts, launch failures, refusals,
// emit-only sessions, renewals, lost wrappers and their recovery)
// through seed 001's transition table, and checks the transitions each
// one takes.
func TestSeed001StateMachine(t *testing.T) {
	ended := func(phase, outcome, reason string) map[string]any {
		return map[string]any{"phase": phase, "outcome": outcome, "reason": reason}
	}
	ending := func(reason string) map[string]any { return map[string]any{"reason": reason} }
	tick := func(state string) map[string]any { return map[string]any{"state": state, "trigger": "state_change"} }
	lost := map[string]any{"phase": "stopped", "outcome": "unknown", "reason": WrapperLost}
	type step struct {
		ev  contract.Event
		sum map[string]any
		mod []func(*contract.LifecycleReceipt)
	}
	s := func(ev contract.Event, sum map[string]any, mod ...func(*contract.LifecycleReceipt)) step {
		return step{ev, sum, mod}
	}
	failed := failedWith(contract.FailureAdapterUnavailable, contract.RetryAfterReconfigure)
	conflict := failedWith(contract.FailureStateConflict, contract.RetryAfterReread)
	begin := []step{s(contract.EventSessionStarting, nil), s(contract.EventSessionStarted, nil)}
	with := func(steps ...step) []step { return append(append([]step(nil), begin...), steps...) }
	for _, c := range []struct {
		name  string
		steps []step
		want  []string
	}{
		{"exit 0", with(s(contract.EventSessionEnded, ended("completed", "success", "exit_code_0"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"}},
		{"abort", with(s(contract.EventSessionEnding, ending("abort")), s(contract.EventSessionEnded, ended("stopped", "cancelled", "abort"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>ABORTING:abort", "ABORTING>ABORTED:abort", "closed:ABORTED"}},
		{"abort while paused", with(s(contract.EventSupervisorTick, tick("paused")), s(contract.EventSessionEnding, ending("abort")), s(contract.EventSessionEnded, ended("stopped", "cancelled", "abort"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>PAUSED:state_change", "PAUSED>ABORTING:abort", "ABORTING>ABORTED:abort", "closed:ABORTED"}},
		{"SIGTERM to the wrapper", with(s(contract.EventSessionEnding, ending("sigterm")), s(contract.EventSessionEnded, ended("stopped", "cancelled", "sigterm"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>ABORTING:sigterm", "ABORTING>ABORTED:sigterm", "closed:ABORTED"}},
		{"SIGINT answered with exit 0", with(s(contract.EventSessionEnding, ending("sigint")), s(contract.EventSessionEnded, ended("stopped", "cancelled", "sigint"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>ABORTING:sigint", "ABORTING>ABORTED:sigint", "closed:ABORTED"}},
		{"harness killed by a signal", with(s(contract.EventSessionEnded, ended("stopped", "cancelled", "sigkill"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>FAILED:sigkill", "closed:FAILED"}},
		{"harness killed while paused", with(s(contract.EventSupervisorTick, tick("paused")), s(contract.EventSessionEnded, ended("stopped", "cancelled", "sigkill"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>PAUSED:state_change", "PAUSED>RUNNING:sigkill", "RUNNING>FAILED:sigkill", "closed:FAILED"}},
		{"timeout", with(s(contract.EventSessionEnding, ending("timeout")), s(contract.EventSessionEnded, ended("failed", "failure", "timeout"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>FAILED:timeout", "closed:FAILED"}},
		{"exit 3", with(s(contract.EventSessionEnded, ended("failed", "failure", "exit_code_3"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>FAILED:exit_code_3", "closed:FAILED"}},
		{"launch failed 127", []step{s(contract.EventSessionStarting, nil), s(contract.EventSessionEnded, map[string]any{"exit_status": 127, "reason": "command_not_found"}, failed)},
			[]string{"PENDING>REJECTED:command_not_found", "closed:REJECTED"}},
		{"launch refused", []step{s(contract.EventSessionStarting, nil, failedWith(contract.FailureCapabilityUnsupported, contract.RetryAfterReconfigure))},
			[]string{"PENDING>REJECTED:capability_unsupported", "closed:REJECTED"}},
		{"wrapper lost before the harness started", []step{s(contract.EventSessionStarting, nil), s(contract.EventSessionEnded, lost, failedWith(contract.FailureInternalError, contract.RetrySafe))},
			[]string{"PENDING>REJECTED:wrapper_lost", "closed:REJECTED"}},
		{"emit-only session", []step{s(contract.EventFrameOpened, map[string]any{"frame_id": "a"}), s(contract.EventFrameEnded, map[string]any{"frame_id": "a"}), s(contract.EventSessionEnded, nil)},
			[]string{"PENDING>RUNNING:observed", "RUNNING>COMPLETED:session_ended", "closed:COMPLETED"}},
		{"emit-only session, ended first", []step{s(contract.EventSessionEnded, map[string]any{"reason": "logout"})},
			[]string{"PENDING>RUNNING:logout", "RUNNING>COMPLETED:logout", "closed:COMPLETED"}},
		{"emit-only, an end refused as an idempotency conflict, then its end", []step{s(contract.EventContextCompacted, nil), s(contract.EventSessionEnded, nil, conflict), s(contract.EventSessionEnded, nil)},
			[]string{"PENDING>RUNNING:observed", "RUNNING>COMPLETED:session_ended", "closed:COMPLETED"}},
		{"an end refused as an idempotency conflict, then an abort", with(s(contract.EventSessionEnded, nil, conflict), s(contract.EventSessionEnding, ending("abort")), s(contract.EventSessionEnded, ended("stopped", "cancelled", "abort"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>ABORTING:abort", "ABORTING>ABORTED:abort", "closed:ABORTED"}},
		{"emit-only degraded", []step{s(contract.EventCapabilityDegraded, nil)},
			[]string{"PENDING>RUNNING:observed"}},
		{"lost wrapper while aborting", with(s(contract.EventSessionEnding, ending("abort")), s(contract.EventSessionEnded, lost)),
			[]string{"PENDING>RUNNING:started", "RUNNING>ABORTING:abort", "ABORTING>ABORTED:wrapper_lost", "closed:ABORTED"}},
		{"lost wrapper, never continued", with(s(contract.EventSessionEnded, lost)),
			[]string{"PENDING>RUNNING:started", "RUNNING>PAUSED:wrapper_lost"}},
		{"lost wrapper, continued", with(s(contract.EventSessionEnded, lost), s(contract.EventSessionStarting, nil), s(contract.EventSessionStarted, nil), s(contract.EventSessionEnded, ended("completed", "success", "exit_code_0"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>PAUSED:wrapper_lost", "PAUSED>RUNNING:recovered_from_checkpoint", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"}},
		{"lost wrapper, continued launch failed", with(s(contract.EventSessionEnded, lost), s(contract.EventSessionStarting, nil), s(contract.EventSessionEnded, map[string]any{"exit_status": 127, "reason": "command_not_found"}, failed)),
			[]string{"PENDING>RUNNING:started", "RUNNING>PAUSED:wrapper_lost", "PAUSED>RUNNING:command_not_found", "RUNNING>FAILED:command_not_found", "closed:FAILED"}},
		{"aborted while paused, no ending recorded", with(s(contract.EventSupervisorTick, tick("paused")), s(contract.EventSessionEnded, ended("completed", "success", "exit_code_0"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>PAUSED:state_change", "PAUSED>RUNNING:exit_code_0", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"}},
		{"abort after abort", with(s(contract.EventSessionEnding, ending("abort")), s(contract.EventSupervisorTick, tick("paused")), s(contract.EventSessionEnding, ending("sigterm")), s(contract.EventSessionEnded, ended("failed", "failure", "timeout"))),
			[]string{"PENDING>RUNNING:started", "RUNNING>ABORTING:abort", "ABORTING>ABORTED:timeout", "closed:ABORTED"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b rb
			var rs []contract.LifecycleReceipt
			for _, st := range c.steps {
				rs = append(rs, b.next(st.ev, st.sum, st.mod...))
			}
			es := project(NewProjector(sid), rs)
			checkEnvelopes(t, es)
			checkSeed001(t, es)
			if got := transitions(es); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("transitions %v, want %v", got, c.want)
			}
		})
	}
	t.Run("renewals", func(t *testing.T) {
		for _, rec := range []bool{false, true} {
			checkSeed001(t, project(NewProjector(sid), renewalLedger(rec)))
		}
	})
}

// TestHarnessSessionSwitch: a switch to a new harness session inside
// one process pauses the session with the old harness session id and
// runs it again with the new one; only the process's end closes it.
func TestHarnessSessionSwitch(t *testing.T) {
	var b rb
	hs := func(id string) func(*contract.LifecycleReceipt) {
		return func(r *contract.LifecycleReceipt) { r.HarnessSessionID = &id }
	}
	sw := func(extra map[string]any) map[string]any {
		m := map[string]any{"reason": contract.HarnessSessionSwitched, contract.SummarySwitch: 1}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	es := project(NewProjector(sid), []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil, hs("A")),
		b.next(contract.EventSessionEnded, sw(map[string]any{"phase": "stopped", "outcome": "success"}), hs("A")),
		b.next(contract.EventSessionStarting, sw(nil), hs("B")),
		b.next(contract.EventSessionStarted, sw(nil), hs("B")),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}, hs("B")),
	})
	checkEnvelopes(t, es)
	checkSeed001(t, es)
	want := []string{SessionCreated, StateChanged, StateChanged, StateChanged, StateChanged, SessionClosed}
	if got := types(es); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if d := es[2].Payload.Data; d["to_state"] != StatePaused || d["reason"] != contract.HarnessSessionSwitched || d["harness_session_id"] != "A" {
		t.Errorf("switch away %v", d)
	}
	if d := es[3].Payload.Data; d["to_state"] != StateRunning || d["reason"] != contract.HarnessSessionSwitched || d["harness_session_id"] != "B" {
		t.Errorf("switch to %v", d)
	}
}

// TestRenewalWhoseRelaunchDied: a relaunch that exits before it is ready
// is an error, and the harness started again as launched
// (fallback_started) resumes the paused session, reason renewal_failed;
// the session is not closed until its real end.
func TestRenewalWhoseRelaunchDied(t *testing.T) {
	var b rb
	step := func(s string) map[string]any {
		return map[string]any{"reason": "renewal", "renewal_attempt": 1, "renewal_step": s}
	}
	ended := step("ended")
	ended["phase"], ended["outcome"] = "stopped", "cancelled"
	died := step(contract.RenewalStepRelaunchFailed)
	died["phase"], died["outcome"], died["exit_code"] = "failed", "failure", 42
	es := project(NewProjector(sid), []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventSessionEnding, step("ending")),
		b.next(contract.EventSessionEnded, ended),
		b.next(contract.EventSessionStarting, step("starting")),
		b.next(contract.EventSessionEnded, died, failedWith(contract.FailureAdapterUnavailable, contract.RetryAfterReconfigure)),
		b.next(contract.EventSessionStarting, step("fallback_starting")),
		b.next(contract.EventSessionStarted, step(contract.RenewalStepFallbackStarted)),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}),
	})
	checkEnvelopes(t, es)
	checkSeed001(t, es)
	want := []string{SessionCreated, StateChanged, StateChanged, Error, StateChanged, StateChanged, SessionClosed}
	if got := types(es); !reflect.DeepEqual(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	if d := es[4].Payload.Data; d["from_state"] != StatePaused || d["to_state"] != StateRunning || d["reason"] != "renewal_failed" {
		t.Errorf("the fallback's resume %v", d)
	}
}

// TestRenewalCutShortByALostWrapper: a wrapper lost in the middle of a
// renewal, whose session is then continued without finishing it, leaves
// no renewal in progress: the continuation's session.started resumes the
// session, and later ticks (an operator's pause and resume) move it again.
func TestRenewalCutShortByALostWrapper(t *testing.T) {
	var b rb
	rs := []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventSessionEnding, map[string]any{"reason": "renewal", "renewal_attempt": 1, "renewal_step": "ending"}),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "stopped", "outcome": "unknown", "reason": WrapperLost}),
		b.next(contract.EventSessionStarting, map[string]any{"continuation": 1}),
		b.next(contract.EventSessionStarted, map[string]any{"continuation": 1}),
		b.next(contract.EventSupervisorTick, map[string]any{"trigger": "state_change", "state": "paused"}),
		b.next(contract.EventSupervisorTick, map[string]any{"trigger": "state_change", "state": "running"}),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0", "continuation": 1}),
	}
	es := project(NewProjector(sid), rs)
	checkSeed001(t, es)
	want := []string{"PENDING>RUNNING:started", "RUNNING>PAUSED:renewal", "PAUSED>RUNNING:recovered_from_checkpoint",
		"RUNNING>PAUSED:state_change", "PAUSED>RUNNING:state_change", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"}
	if got := transitions(es); !reflect.DeepEqual(got, want) {
		t.Errorf("transitions %v\nwant %v", got, want)
	}
}

// A session no wrapper runs ends when its reporter says so (emit, or the
// harness's own session-end hook through host-hook): OrgLoop and HCP tell
// the same ending, completed and COMPLETED with the same reason, whether
// the receipt carries host-hook's classification or none.
func TestReportedEndAgreesWithOrgLoop(t *testing.T) {
	start, end := time.Unix(1778100000, 0), time.Unix(1778100030, 0)
	for _, mode := range []contract.IntegrationMode{contract.ModeNativeHook, contract.ModeManualSkill} {
		for _, c := range []struct {
			name string
			sum  map[string]any
		}{
			{"as host-hook records it", contract.ReportedEndSummary("prompt_input_exit", start, end, "/p")},
			{"nothing known", nil},
			{"the harness's reason only", map[string]any{contract.SummaryHarnessReason: "other"}},
			{"a reason", map[string]any{"reason": "logout"}},
		} {
			t.Run(string(mode)+"/"+c.name, func(t *testing.T) {
				b := rb{}
				inMode := func(r *contract.LifecycleReceipt) { r.IntegrationMode = mode }
				rs := []contract.LifecycleReceipt{
					b.next(contract.EventSessionStarted, nil, inMode),
					b.next(contract.EventSessionEnding, map[string]any{"reason": "other"}, inMode),
					b.next(contract.EventSessionEnded, c.sum, inMode),
				}
				var closed map[string]any
				for _, e := range project(NewProjector("ses_A"), rs) {
					if e.Payload.EventType == SessionClosed {
						closed = e.Payload.Data
					}
				}
				ev, err := contract.ProjectOrgLoop(rs[2], contract.OrgLoopOptions{SessionID: "ses_A", Harness: contract.HarnessClaudeCode})
				if err != nil {
					t.Fatal(err)
				}
				lc := ev.Payload.Lifecycle
				if closed == nil || closed["final_state"] != StateCompleted || lc.Phase != contract.PhaseCompleted || lc.Outcome != contract.LifecycleSuccess {
					t.Fatalf("HCP session_closed %v, OrgLoop %s/%s: want COMPLETED and completed/success", closed, lc.Phase, lc.Outcome)
				}
				if closed["reason"] != lc.Reason {
					t.Errorf("HCP closes with reason %v, OrgLoop ends with %q", closed["reason"], lc.Reason)
				}
			})
		}
	}
}

// TestContinuationOfAClosedSessionOpensANewOne: `run --continue-session`
// of a session whose harness ended (HCP closed it COMPLETED, FAILED,
// ABORTED or REJECTED) cannot reopen that HCP session (seed 001: a
// terminal state is final). The continuation's receipts (continuation N)
// open a new HCP session, <session>.c<N>, whose session_created names the
// one it continues; each HCP session has one session_created and one
// session_closed, sequences from 1, and passes seed 001. A continuation
// after a lost wrapper (the session kept PAUSED, never closed) stays in
// its HCP session.
func TestContinuationOfAClosedSessionOpensANewOne(t *testing.T) {
	var b rb
	c := func(n int, sum map[string]any) map[string]any {
		out := map[string]any{"continuation": n}
		for k, v := range sum {
			out[k] = v
		}
		return out
	}
	failed := map[string]any{"phase": "failed", "outcome": "failure", "reason": "exit_code_42"}
	done := map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}
	rs := []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventSessionEnded, failed),
		// The first continuation: a new HCP session.
		b.next(contract.EventSessionStarting, c(1, nil)),
		b.next(contract.EventSessionStarted, c(1, nil)),
		// Its wrapper is lost: kept PAUSED, the next continuation resumes it.
		b.next(contract.EventSessionEnded, c(1, map[string]any{"phase": "stopped", "outcome": "unknown", "reason": WrapperLost})),
		b.next(contract.EventSessionStarting, c(2, nil)),
		b.next(contract.EventSessionStarted, c(2, nil)),
		b.next(contract.EventSessionEnded, c(2, done)),
		// Continued once more after that end: a third HCP session.
		b.next(contract.EventSessionStarting, c(3, nil)),
		b.next(contract.EventSessionStarted, c(3, nil)),
		b.next(contract.EventSessionEnded, c(3, done)),
	}
	p := NewProjector(sid)
	es := project(p, rs)
	if err := CheckStream(es); err != nil {
		t.Fatalf("%v\n%v", err, transitions(es))
	}
	bySession := map[string][]Envelope{}
	var order []string
	for _, e := range es {
		if bySession[e.SessionID] == nil {
			order = append(order, e.SessionID)
		}
		bySession[e.SessionID] = append(bySession[e.SessionID], e)
	}
	if want := []string{sid, sid + ".c1", sid + ".c3"}; !reflect.DeepEqual(order, want) {
		t.Fatalf("HCP sessions %v, want %v (transitions %v)", order, want, transitions(es))
	}
	wantTransitions := map[string][]string{
		sid:         {"PENDING>RUNNING:started", "RUNNING>FAILED:exit_code_42", "closed:FAILED"},
		sid + ".c1": {"PENDING>RUNNING:started", "RUNNING>PAUSED:wrapper_lost", "PAUSED>RUNNING:recovered_from_checkpoint", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"},
		sid + ".c3": {"PENDING>RUNNING:started", "RUNNING>COMPLETED:exit_code_0", "closed:COMPLETED"},
	}
	continues := map[string]string{sid + ".c1": sid, sid + ".c3": sid + ".c1"}
	for _, id := range order {
		got := bySession[id]
		if err := CheckStream(got); err != nil {
			t.Errorf("HCP session %s alone: %v", id, err)
		}
		if tr := transitions(got); !reflect.DeepEqual(tr, wantTransitions[id]) {
			t.Errorf("HCP session %s: transitions %v, want %v", id, tr, wantTransitions[id])
		}
		meta, _ := got[0].Payload.Data["metadata"].(map[string]any)
		if want := continues[id]; want != "" && (meta["continues_session_id"] != want || meta["lifeloop_session_id"] != sid) {
			t.Errorf("HCP session %s: session_created metadata %v, want continues_session_id %s and lifeloop_session_id %s", id, meta, want, sid)
		}
	}
	if p.State() != StateCompleted || p.SessionID() != sid+".c3" {
		t.Errorf("projector after the last end: state %s in HCP session %s, want COMPLETED in %s.c3", p.State(), p.SessionID(), sid)
	}
	// Replaying the ledger gives the same events (ids, sequences).
	if again := project(NewProjector(sid), rs); !reflect.DeepEqual(again, es) {
		t.Errorf("a replay differs from the first projection")
	}
}
