package hcp

import (
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// TestSessionCreatedNamesTheMachine: a projector told its machine puts
// it in session_created's metadata, also beside a continuation's, and
// one that was not told leaves metadata out.
func TestSessionCreatedNamesTheMachine(t *testing.T) {
	var b rb
	p := NewProjector(sid)
	p.SetMachine("build-7")
	es := p.Project(b.next(contract.EventSessionStarting, nil))
	if m, _ := es[0].Payload.Data["metadata"].(map[string]any); m["machine"] != "build-7" {
		t.Fatalf("session_created data %v: want metadata.machine build-7", es[0].Payload.Data)
	}
	es = project(p, []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0"}),
		b.next(contract.EventSessionStarting, map[string]any{contract.SummaryContinuation: 1}),
	})
	last := es[len(es)-1]
	m, _ := last.Payload.Data["metadata"].(map[string]any)
	if last.Payload.EventType != SessionCreated || m["machine"] != "build-7" || m["continuation"] != 1 {
		t.Errorf("the continuation's session_created %v: want machine and continuation metadata", last.Payload.Data)
	}
	var plain rb
	if d := NewProjector(sid).Project(plain.next(contract.EventSessionStarting, nil))[0].Payload.Data; d["metadata"] != nil {
		t.Errorf("no machine named, yet metadata %v", d["metadata"])
	}
}
