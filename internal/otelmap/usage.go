package otelmap

import (
	"sort"
	"time"

	"go.opentelemetry.io/otel/attribute"
)

// Usage's names (docs/contract.md, "Usage travels on frame ends"): a
// turn's tokens on its frame span, in the GenAI semantic conventions'
// attributes, and the session's cost by provenance.
const (
	AttrUsageInput      = attribute.Key("gen_ai.usage.input_tokens")
	AttrUsageOutput     = attribute.Key("gen_ai.usage.output_tokens")
	AttrUsageCacheRead  = attribute.Key("gen_ai.usage.cache_read.input_tokens")
	AttrUsageCacheWrite = attribute.Key("gen_ai.usage.cache_creation.input_tokens")
	AttrUsageReasoning  = attribute.Key("lifeloop.usage.reasoning_tokens")
	AttrUsageCalls      = attribute.Key("lifeloop.usage.calls")
	AttrCostUSD         = attribute.Key("lifeloop.cost.usd")
	AttrCostProvenance  = attribute.Key("lifeloop.cost.provenance")

	// MetricCost counts the session's dollars, by the provenance of the
	// turns' costs (attribute lifeloop.cost.provenance); a turn no call
	// of which is priced adds nothing.
	MetricCost = "lifeloop.cost.usd"
)

// turnUsage sets a frame.ended's usage block on its frame span (its
// gen_ai.usage.input_tokens then counts the turn's calls, not the
// context of its last request) and adds its priced cost to the
// session's cost counter.
func (m *Mapper) turnUsage(f *openSpan, t time.Time, sum map[string]any, out *Output) {
	b, _ := sum["usage"].(map[string]any)
	if b == nil || f == nil {
		return
	}
	tok, _ := b["tokens"].(map[string]any)
	n := func(v any) int64 { x, _ := number(v); return int64(x) }
	// The GenAI convention's input tokens include the cached ones.
	in := n(tok["input"]) + n(tok["cache_read"]) + n(tok["cache_write"])
	f.billed = true
	f.set(AttrUsageInput.Int64(in), AttrUsageOutput.Int64(n(tok["output"])),
		AttrUsageCacheRead.Int64(n(tok["cache_read"])), AttrUsageCacheWrite.Int64(n(tok["cache_write"])),
		AttrUsageReasoning.Int64(n(tok["reasoning"])), AttrUsageCalls.Int64(n(b["calls"])))
	cost, _ := b["cost"].(map[string]any)
	prov := str(cost["provenance"])
	f.set(AttrCostProvenance.String(prov))
	usd, ok := number(cost["usd"])
	if !ok {
		return
	}
	f.set(AttrCostUSD.Float64(usd))
	if m.cost == nil {
		m.cost = map[string]float64{}
	}
	m.cost[prov] += usd
	provs := make([]string, 0, len(m.cost))
	for p := range m.cost {
		provs = append(provs, p)
	}
	sort.Strings(provs)
	for _, p := range provs {
		out.Metrics = append(out.Metrics, Metric{Name: MetricCost, Unit: "USD", Description: "Cost of the session's model calls, by provenance",
			Kind: FloatCounter, Start: m.start, Time: t, Attrs: []attribute.KeyValue{AttrCostProvenance.String(p)}, Value: m.cost[p]})
	}
}
