package fleet

import (
	"encoding/json"
	"testing"

	"github.com/lifeloop/lifeloop/internal/hcp"
)

// TestViewAddsUpTheTurnsUsage: a session's cost is its turns' blocks
// added up (the priced part; an unpriced turn makes the provenance say
// so, never $0), and the totals its end carries replace that sum.
func TestViewAddsUpTheTurnsUsage(t *testing.T) {
	env := func(seq uint64, typ, data string) hcp.Envelope {
		var d map[string]any
		if err := json.Unmarshal([]byte(data), &d); err != nil {
			t.Fatal(err)
		}
		return hcp.Envelope{SessionID: "ses_u", Timestamp: "2026-12-03T02:00:00.000Z", Payload: hcp.Event{EventType: typ, Sequence: seq, Data: d}}
	}
	v := NewView()
	v.Apply(env(1, hcp.SessionCreated, `{"state":"PENDING","adapter_id":"claude","metadata":{"machine":"m1"}}`))
	v.Apply(env(2, hcp.Progress, `{"stage":"frame.ended","metadata":{"usage":{"calls":1,"tokens":{"input":100,"output":10},"cost":{"usd":0.25,"provenance":"estimated"}}}}`))
	v.Apply(env(3, hcp.Progress, `{"stage":"frame.ended","metadata":{"usage":{"calls":2,"tokens":{"input":50},"cost":{"provenance":"unknown"}}}}`))
	u := v.Rows(v.MachineSeen("m1"), 0)[0].Usage
	cost, _ := u["cost"].(map[string]any)
	tok, _ := u["tokens"].(map[string]any)
	if u["calls"] != 3.0 || tok["input"] != 150.0 || tok["output"] != 10.0 || cost["usd"] != 0.25 || cost["provenance"] != "estimated+unknown" {
		t.Fatalf("two turns' usage: %v", u)
	}
	v.Apply(env(4, hcp.StateChanged, `{"from_state":"RUNNING","to_state":"COMPLETED","metadata":{"usage":{"calls":4,"cost":{"usd":1.5,"provenance":"native"}}}}`))
	u = v.Rows(v.MachineSeen("m1"), 0)[0].Usage
	if cost, _ := u["cost"].(map[string]any); u["calls"] != 4.0 || cost["usd"] != 1.5 {
		t.Fatalf("the end's totals: %v", u)
	}
}
