package otelmap_test

import (
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelmap"
)

// TestUsageOnTheTurnSpan: a frame.ended's usage block becomes its frame
// span's gen_ai.usage.* attributes (input with the cache, as the GenAI
// conventions count it, not replaced by the turn's context observation)
// and cost; the cost counter sums the priced
// turns by provenance, and a turn whose cost is unknown adds no dollars.
func TestUsageOnTheTurnSpan(t *testing.T) {
	block := func(input, cr, cw, out float64, usd any, prov string) map[string]any {
		cost := map[string]any{"provenance": prov}
		if usd != nil {
			cost["usd"] = usd
		}
		return map[string]any{"usage": map[string]any{"calls": 1.0, "cost": cost,
			"tokens": map[string]any{"input": input, "cache_read": cr, "cache_write": cw, "output": out, "reasoning": 0.0}}}
	}
	m := otelmap.New("ses_usage")
	var out otelmap.Output
	for i, r := range []struct {
		ev    contract.Event
		frame string
		sum   map[string]any
	}{
		{contract.EventSessionStarting, "", nil},
		{contract.EventSessionStarted, "", nil},
		{contract.EventFrameOpening, "f1", nil},
		{contract.EventFrameEnded, "f1", block(1200, 4000, 300, 77, 0.00708, "estimated")},
		{contract.EventContextPressureObserved, "f1", map[string]any{"level": "low", "tokens": 99999.0}},
		{contract.EventFrameOpening, "f2", nil},
		{contract.EventFrameEnded, "f2", block(10, 0, 0, 5, nil, "unknown")},
		{contract.EventFrameOpening, "f3", nil},
		{contract.EventFrameEnded, "f3", block(10, 0, 0, 5, 0.5, "estimated")},
		{contract.EventSessionEnded, "", map[string]any{"phase": "completed", "outcome": "success"}},
	} {
		seq := uint64(i + 1)
		rc := contract.LifecycleReceipt{ReceiptID: "r" + string(rune('a'+i)), Sequence: &seq, Event: r.ev, AdapterID: "claude",
			AtEpochS: 1778100000 + int64(i), TelemetrySummary: r.sum}
		if r.frame != "" {
			if rc.TelemetrySummary == nil {
				rc.TelemetrySummary = map[string]any{}
			}
			rc.TelemetrySummary["frame_id"] = r.frame
		}
		o := m.Map(ledger.Entry{Sequence: seq, Receipt: rc})
		out.Spans = append(out.Spans, o.Spans...)
		out.Metrics = append(out.Metrics, o.Metrics...)
	}
	frames := spansNamed(out, otelmap.SpanFrame)
	if len(frames) != 3 {
		t.Fatalf("%d frame spans, want 3", len(frames))
	}
	for k, want := range map[attribute.Key]int64{otelmap.AttrUsageInput: 5500, otelmap.AttrUsageOutput: 77, otelmap.AttrUsageCacheRead: 4000, otelmap.AttrUsageCacheWrite: 300} {
		if v, ok := attr(frames[0].Attrs, k); !ok || v.AsInt64() != want {
			t.Errorf("first frame: %v = %v, want %d", k, v.Emit(), want)
		}
	}
	if v, _ := attr(frames[0].Attrs, otelmap.AttrCostUSD); v.AsFloat64() != 0.00708 {
		t.Errorf("first frame's cost %v, want 0.00708", v.Emit())
	}
	if _, ok := attr(frames[1].Attrs, otelmap.AttrCostUSD); ok {
		t.Error("an unknown cost has a usd attribute")
	}
	if v, _ := attr(frames[1].Attrs, otelmap.AttrCostProvenance); v.AsString() != "unknown" {
		t.Errorf("second frame's provenance %q, want unknown", v.AsString())
	}
	var last *otelmap.Metric
	for i := range out.Metrics {
		if out.Metrics[i].Name == otelmap.MetricCost {
			last = &out.Metrics[i]
		}
	}
	if last == nil || last.Kind != otelmap.FloatCounter || last.Value != 0.00708+0.5 {
		t.Fatalf("last cost point %+v, want a float counter at 0.50708", last)
	}
	if v, _ := attr(last.Attrs, otelmap.AttrCostProvenance); v.AsString() != "estimated" {
		t.Errorf("cost point provenance %q, want estimated", v.AsString())
	}
}
