package hcp

import (
	"encoding/json"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// attentionTick is a supervisor.tick carrying block, with trigger.
func attentionTick(b *rb, trigger, state string, block attention.Block) contract.LifecycleReceipt {
	return b.next(contract.EventSupervisorTick, map[string]any{"state": state, "trigger": trigger, attention.BlockKey: block.Map()})
}

// TestAttentionEvents: each change of attention is a progress event with
// the block as metadata.attention; an episode of needs_permission or
// stopped_on_error is warned about once (not again for the interval
// tick that carries it, nor for its source's takeover), one of
// waiting_for_input is not; the state_changed events that follow carry
// the latest block (the end's: session.ended's, with the episode the end
// closed); the stream is still seed 001's.
func TestAttentionEvents(t *testing.T) {
	var b rb
	const t0 = int64(1778100000000)
	perm := attention.Block{State: attention.NeedsPermission, Since: t0 + 3000, Source: attention.SourceScreen, Detail: "Bash", Episode: 1, Turn: 1,
		WaitedMs: map[attention.State]int64{attention.NeedsPermission: 0}}
	permHook := perm
	permHook.Source = attention.SourceHook
	answered := attention.Block{State: attention.Working, Since: t0 + 9000, Source: attention.SourceFrame, Turn: 1,
		WaitedMs: map[attention.State]int64{attention.NeedsPermission: 6000},
		Closed:   &attention.EpisodeBlock{ID: 1, Kind: attention.NeedsPermission, Source: attention.SourceHook, Detail: "Bash", Turn: 1, Start: t0 + 3000, End: t0 + 9000, DurationMs: 6000}}
	idle := attention.Block{State: attention.WaitingForInput, Since: t0 + 12000, Source: attention.SourceFrame, Episode: 2, Turn: 1,
		WaitedMs: map[attention.State]int64{attention.NeedsPermission: 6000, attention.WaitingForInput: 0}}
	failed := attention.Block{State: attention.StoppedOnError, Since: t0 + 20000, Source: attention.SourceHook, Detail: "rate_limit", Episode: 3, Turn: 2,
		WaitedMs: map[attention.State]int64{attention.NeedsPermission: 6000, attention.WaitingForInput: 7000, attention.StoppedOnError: 0}}
	rs := []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		attentionTick(&b, "attention_changed", "running", perm),
		attentionTick(&b, "attention_changed", "running", permHook), // the hook takes the episode over
		attentionTick(&b, "interval", "running", permHook),
		attentionTick(&b, "attention_changed", "running", answered),
		attentionTick(&b, "attention_changed", "running", idle),
		attentionTick(&b, "state_change", "paused", idle),
		attentionTick(&b, "state_change", "running", idle),
		attentionTick(&b, "attention_changed", "running", failed),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0", "exit_status": 0,
			attention.BlockKey: attention.Block{State: attention.Unknown, Since: t0 + 30000, Turn: 2,
				WaitedMs: map[attention.State]int64{attention.NeedsPermission: 6000, attention.WaitingForInput: 7000, attention.StoppedOnError: 10000},
				Closed:   &attention.EpisodeBlock{ID: 3, Kind: attention.StoppedOnError, Source: attention.SourceHook, Detail: "rate_limit", Turn: 2, Start: t0 + 20000, End: t0 + 30000, DurationMs: 10000}}.Map()}),
	}
	es := project(NewProjector(sid), rs)
	checkEnvelopes(t, es)
	checkSeed001(t, es)

	var progress, warnings []map[string]any
	for _, e := range es {
		d := e.Payload.Data
		switch e.Payload.EventType {
		case Progress:
			if d["stage"] == StageAttention {
				progress = append(progress, d)
			}
		case Warning:
			warnings = append(warnings, d)
		case StateChanged:
			if d["from_state"] == StatePending {
				if _, ok := d["metadata"]; ok {
					t.Errorf("a state_changed before any attention has metadata: %v", d)
				}
				continue
			}
			meta, _ := d["metadata"].(map[string]any)
			att, _ := meta["attention"].(map[string]any)
			// The end's state_changed: session.ended's block, the
			// last episode closed by the end.
			want := attention.Unknown
			if d["reason"] == "state_change" {
				want = attention.WaitingForInput
			} else if c, _ := att["closed"].(map[string]any); c["duration_ms"] != 10000.0 {
				t.Errorf("the end's metadata.attention.closed %v, want the last episode, 10000 ms", c)
			}
			if att["state"] != string(want) {
				t.Errorf("state_changed %v → %v: metadata.attention %v, want the latest block (%s)", d["from_state"], d["to_state"], att, want)
			}
		}
	}
	wantStates := []string{"needs_permission", "needs_permission", "working", "waiting_for_input", "stopped_on_error"}
	if len(progress) != len(wantStates) {
		t.Fatalf("%d attention progress events, want %d: %v", len(progress), len(wantStates), progress)
	}
	for i, d := range progress {
		att := d["metadata"].(map[string]any)["attention"].(map[string]any)
		if att["state"] != wantStates[i] {
			t.Errorf("progress %d: attention %v, want %s", i, att, wantStates[i])
		}
	}
	closed, _ := progress[2]["metadata"].(map[string]any)["attention"].(map[string]any)["closed"].(map[string]any)
	if closed["duration_ms"] != int64(6000) && closed["duration_ms"] != 6000.0 {
		t.Errorf("the answer's progress: closed %v, want the episode of 6000 ms", closed)
	}
	if progress[0]["message"] != "attention: needs_permission (Bash)" {
		t.Errorf("message %q", progress[0]["message"])
	}
	if len(warnings) != 2 {
		t.Fatalf("warnings %v, want one for the dialog and one for the error", warnings)
	}
	for i, w := range []struct{ code, state string }{{WarnNeedsPermission, "needs_permission"}, {WarnStoppedOnError, "stopped_on_error"}} {
		att, _ := warnings[i]["details"].(map[string]any)["attention"].(map[string]any)
		if warnings[i]["code"] != w.code || att["state"] != w.state {
			t.Errorf("warning %d: %v, want %s with details.attention", i, warnings[i], w.code)
		}
	}

	// As a consumer decodes it.
	raw, err := json.Marshal(es[len(es)-3])
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if dec.Payload.EventType != Warning || dec.Payload.Data["details"].(map[string]any)["attention"].(map[string]any)["detail"] != "rate_limit" {
		t.Errorf("decoded %+v", dec.Payload)
	}

	// A new tracker numbers its episodes from 1 again: a dialog of the
	// same number but another start is warned about.
	p := NewProjector(sid)
	project(p, rs[:4])
	again := perm
	again.Since += 60000
	if es := p.Project(attentionTick(&b, "attention_changed", "running", again)); len(types(es)) != 2 || es[1].Payload.EventType != Warning {
		t.Errorf("a new episode 1: %v, want progress and a warning", types(es))
	}
}

// TestAttentionBlockBuiltInMemory: a receipt whose summary holds the
// attention.Block itself (built in memory, not read from a ledger)
// projects as the ledger's map does.
func TestAttentionBlockBuiltInMemory(t *testing.T) {
	var b rb
	p := NewProjector(sid)
	project(p, []contract.LifecycleReceipt{b.next(contract.EventSessionStarting, nil), b.next(contract.EventSessionStarted, nil)})
	block := attention.Block{State: attention.StoppedOnError, Since: 1778100005000, Source: attention.SourceHook, Detail: "rate_limit", Episode: 1, Turn: 1}
	es := p.Project(b.next(contract.EventSupervisorTick, map[string]any{"state": "running", "trigger": "attention_changed", attention.BlockKey: block}))
	if len(es) != 2 || es[1].Payload.EventType != Warning {
		t.Fatalf("events %v", types(es))
	}
	if att := es[1].Payload.Data["details"].(map[string]any)["attention"].(map[string]any); att["detail"] != "rate_limit" || att["state"] != "stopped_on_error" {
		t.Errorf("details.attention %v", att)
	}
}
