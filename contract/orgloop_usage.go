package contract

import "maps"

// summaryUsage is the telemetry_summary key of the usage block a turn's
// frame.ended and a session.ended carry (docs/contract.md, "Usage
// travels on frame ends").
const summaryUsage = "usage"

// orgLoopUsage is payload.usage of a receipt's event: on a turn's end
// (frame.ended, active/idle) its calls, and on a stop (session.ended)
// the session's totals — tokens per kind, the cost with its provenance
// (no usd when no call is priced: unknown, never 0), per model, and on
// a stop per harness session. nil when the receipt carries no block.
func orgLoopUsage(r LifecycleReceipt, lc OrgLoopLifecycle) map[string]any {
	if r.Event != EventFrameEnded && !(r.Event == EventSessionEnded && lc.Terminal) {
		return nil
	}
	block := summaryObject(r.TelemetrySummary[summaryUsage])
	if len(block) == 0 {
		return nil
	}
	return maps.Clone(block)
}
