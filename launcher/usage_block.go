package launcher

import (
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/usage"
)

// usageKey is the telemetry_summary key of the usage block.
const usageKey = "usage"

// add adds s to model's sums.
func (ms modelSums) add(model string, s *usage.Sums) {
	t := ms[model]
	if t == nil {
		t = &usage.Sums{}
		ms[model] = t
	}
	t.Calls += s.Calls
	t.Tokens.Add(s.Tokens)
	t.Native += s.Native
	t.Estimated += s.Estimated
	t.NativeCalls += s.NativeCalls
	t.EstimatedCalls += s.EstimatedCalls
	t.UnknownCalls += s.UnknownCalls
}

// block is the usage block of ms: the sums of every model, and each
// model's under models.
func (ms modelSums) block() map[string]any {
	var all usage.Sums
	models := make(map[string]any, len(ms))
	for m, s := range ms {
		modelSums{"": &all}.add("", s)
		models[m] = sumsBlock(s)
	}
	b := sumsBlock(&all)
	b["models"] = models
	return b
}

// sumsBlock is s as receipts carry it: calls, tokens by kind and the
// cost, whose usd is left out when no call is priced.
func sumsBlock(s *usage.Sums) map[string]any {
	cost := map[string]any{"provenance": s.Provenance()}
	if s.NativeCalls+s.EstimatedCalls > 0 {
		cost["usd"] = s.Native + s.Estimated
	}
	return map[string]any{
		"calls": s.Calls,
		"tokens": map[string]any{
			"input": s.Tokens.Input, "cache_read": s.Tokens.CacheRead, "cache_write": s.Tokens.CacheWrite,
			"output": s.Tokens.Output, "reasoning": s.Tokens.Reasoning, "total": s.Tokens.Total(),
		},
		"cost": cost,
	}
}

// usageOnReceipt adds the usage block to a receipt the wrapper is about
// to record: a turn's frame.ended carries its calls (usageMeter.turnEnded),
// session.ended the session's totals. A moment
// under an idempotency key (a client's) or one that has the block is
// left as it is.
func (s *supervisor) usageOnReceipt(m Moment) Moment {
	u := s.cfg.Telemetry.meter()
	if u == nil || m.IdempotencyKey != nil {
		return m
	}
	if _, ok := m.Summary[usageKey]; ok {
		return m
	}
	var block map[string]any
	switch {
	case m.Event == contract.EventFrameEnded && m.Frame != nil && isTurn(*m.Frame):
		block = u.turnEnded(m.Frame.FrameID)
	case m.Event == contract.EventSessionEnded:
		block = u.sessionEnded()
	}
	if block == nil {
		return m
	}
	m.Summary = cloneSummary(m.Summary)
	m.Summary[usageKey] = block
	return m
}

// cloneSummary is a copy of sum that can be written to.
func cloneSummary(sum map[string]any) map[string]any {
	if sum == nil {
		return map[string]any{}
	}
	return clone(sum)
}
