package hcp

import "github.com/lifeloop/lifeloop/contract"

// usageKey is the telemetry_summary key of the usage block a turn's
// frame.ended and a session.ended carry (docs/contract.md, "Usage
// travels on frame ends"), and the metadata key it travels under.
const usageKey = "usage"

// usageOf is the usage block r carries to HCP: a turn's frame.ended's
// (its calls) or a session.ended's (the session's totals so far); nil
// for any other receipt or one without a block.
func usageOf(r contract.LifecycleReceipt) map[string]any {
	if r.Event != contract.EventFrameEnded && r.Event != contract.EventSessionEnded {
		return nil
	}
	u, _ := r.TelemetrySummary[usageKey].(map[string]any)
	if len(u) == 0 {
		return nil
	}
	return u
}

// usageMetadata adds the receipt's usage block to an event's data as
// metadata.usage: the frame.ended's progress, and the state_changed
// events of a session.ended (its final state, a switch's pause).
func (b *batch) usageMetadata(d map[string]any) {
	if b.usage == nil {
		return
	}
	meta, _ := d["metadata"].(map[string]any)
	meta = copyMap(meta)
	meta[usageKey] = copyMap(b.usage)
	d["metadata"] = meta
}
