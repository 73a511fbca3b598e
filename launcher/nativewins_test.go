package launcher

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestNativeWins: a turn end reported by the rollout and by Codex's notify
// hook is recorded once, from the hook, with the rollout's provenance
// attached; a turn end no hook reports is recorded from the rollout after
// the window; telemetry moments keep their order; the stages a source
// skipped are inferred before the moment that implies them.
func TestNativeWins(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "echo ready; sleep 1")
	f.cfg.Adapter = adapters.AdapterOf(codex.Harness{})
	f.cfg.BridgeArgs = []string{"-c", "notify=[]"}
	frame := func(id string) *contract.FrameContext {
		return &contract.FrameContext{FrameID: id, FrameClass: contract.FrameTopLevel}
	}
	rollout := func(ev contract.Event, fc *contract.FrameContext) Moment {
		return Moment{Event: ev, Frame: fc, Summary: map[string]any{"source": "rollout", "line": 7}}
	}
	obs := make(chan Moment, 8)
	obs <- rollout(contract.EventFrameOpening, frame("turn-1"))
	obs <- rollout(contract.EventFrameEnded, frame("turn-1"))
	obs <- rollout(contract.EventFrameEnded, frame("turn-2"))
	obs <- Moment{Event: contract.EventContextPressureObserved, Summary: map[string]any{"source": "rollout"}}
	close(obs)
	f.cfg.Observations = obs

	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ready") })
	notify, _ := json.Marshal(map[string]any{"type": "agent-turn-complete", "thread-id": "th-1", "turn-id": "turn-1"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var reply hooks.HookReply
	if err := control.Call(ctx, f.cfg.ControlSocket, control.OpHook, hooks.HookArgs{Adapter: "codex", Hook: "notify", Argv: []string{string(notify)}}, &reply); err != nil {
		t.Fatal(err)
	}
	<-done

	var got []string
	for _, m := range f.rec.moments {
		if m.Frame != nil || m.Event == contract.EventContextPressureObserved {
			id := ""
			if m.Frame != nil {
				id = m.Frame.FrameID
			}
			got = append(got, string(m.Event)+" "+id+" "+m.Summary["source"].(string))
		}
	}
	want := []string{
		"frame.opening turn-1 rollout",
		"frame.opened turn-1 inferred",
		"frame.ending turn-1 inferred",
		"frame.ended turn-1 hook",
		"frame.opening turn-2 inferred",
		"frame.opened turn-2 inferred",
		"frame.ending turn-2 inferred",
		"frame.ended turn-2 rollout",
		"context.pressure_observed  rollout",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("recorded:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	hooked, _ := f.rec.last(contract.EventFrameEnded)
	for _, m := range f.rec.moments {
		if m.Event == contract.EventFrameEnded && m.Frame.FrameID == "turn-1" {
			hooked = m
		}
	}
	if ev, _ := hooked.Summary["transcript"].(map[string]any); ev["line"] != 7 {
		t.Errorf("the hook's receipt does not carry the rollout's provenance: %v", hooked.Summary)
	}
}
