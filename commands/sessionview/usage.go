package sessionview

import (
	"fmt"
	"github.com/lifeloop/lifeloop/internal/pricing"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// Usage is the tokens and cost of a session's model calls, as the
// usage blocks of its receipts say them (docs/contract.md, "Usage
// travels on frame ends"): session.ended's total, else the sum of its
// turns' frame.ended blocks, or a live wrapper's status.
type Usage struct {
	Calls      int64 `json:"calls"`
	Input      int64 `json:"input_tokens"`
	CacheRead  int64 `json:"cache_read_tokens"`
	CacheWrite int64 `json:"cache_write_tokens"`
	Output     int64 `json:"output_tokens"`
	Reasoning  int64 `json:"reasoning_tokens"`
	Total      int64 `json:"total_tokens"`
	// USD is the priced part of the cost, nil when no call is priced
	// (never 0 for an unknown cost).
	USD *float64 `json:"cost_usd"`
	// Provenance is native, estimated or unknown, joined with "+" when
	// the calls differ.
	Provenance string `json:"cost_provenance"`
}

// UsageFrom reads a usage block (a receipt's telemetry_summary.usage, or
// control.Status.Usage); ok is false when there is none.
func UsageFrom(block any) (Usage, bool) {
	b, _ := block.(map[string]any)
	if b == nil {
		return Usage{}, false
	}
	var u Usage
	n := func(m map[string]any, k string) int64 { v, _ := Number(m[k]); return int64(v) }
	u.Calls = n(b, "calls")
	tok, _ := b["tokens"].(map[string]any)
	u.Input, u.CacheRead, u.CacheWrite = n(tok, "input"), n(tok, "cache_read"), n(tok, "cache_write")
	u.Output, u.Reasoning, u.Total = n(tok, "output"), n(tok, "reasoning"), n(tok, "total")
	cost, _ := b["cost"].(map[string]any)
	u.Provenance, _ = cost["provenance"].(string)
	if v, ok := Number(cost["usd"]); ok {
		u.USD = &v
	}
	return u, true
}

// add adds o to u; provenances are joined.
func (u *Usage) add(o Usage) {
	u.Calls += o.Calls
	u.Input += o.Input
	u.CacheRead += o.CacheRead
	u.CacheWrite += o.CacheWrite
	u.Output += o.Output
	u.Reasoning += o.Reasoning
	u.Total += o.Total
	if o.USD != nil {
		v := *o.USD
		if u.USD != nil {
			v += *u.USD
		}
		u.USD = &v
	}
	u.Provenance = pricing.JoinProvenance(u.Provenance, o.Provenance)
}

// CostText is the cost as a person reads it: "$0.31", "?" when no call
// is priced, "$0.31+?" when some are not; "" without calls.
func (u *Usage) CostText() string {
	switch {
	case u == nil || u.Calls == 0:
		return ""
	case u.USD == nil:
		return "?"
	case strings.Contains(u.Provenance, "unknown"):
		return fmt.Sprintf("$%.2f+?", *u.USD)
	}
	return fmt.Sprintf("$%.2f", *u.USD)
}

// Sum is the usage of several sessions (nil when none has any).
func Sum(us ...*Usage) *Usage {
	var t *Usage
	for _, u := range us {
		if u == nil {
			continue
		}
		if t == nil {
			t = &Usage{}
		}
		t.add(*u)
	}
	return t
}

// usageTracker folds receipts' usage blocks: a session.ended gives the
// total so far (the wrapped session's, renewals included), the turns
// after it add to it.
type usageTracker struct {
	turns Usage
	total *Usage
}

func (t *usageTracker) apply(r contract.LifecycleReceipt) {
	u, ok := UsageFrom(r.TelemetrySummary["usage"])
	if !ok {
		return
	}
	switch r.Event {
	case contract.EventFrameEnded:
		t.turns.add(u)
	case contract.EventSessionEnded:
		t.total, t.turns = &u, Usage{}
	}
}

// usage is the session's usage so far, nil when no block was seen.
func (t *usageTracker) usage() *Usage {
	var turns *Usage
	if t.turns.Calls > 0 {
		turns = &t.turns
	}
	return Sum(t.total, turns)
}

// LatestUsage reads session id's usage from its ledger (nil: none).
func LatestUsage(root, id string) *Usage {
	var t usageTracker
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err == nil {
			t.apply(e.Receipt)
		}
	}
	return t.usage()
}

// Text is the usage as status prints it: calls, tokens by kind, and the
// cost with its provenance ("?" when unknown).
func (u *Usage) Text() string {
	calls := "1 call"
	if u.Calls != 1 {
		calls = fmt.Sprintf("%d calls", u.Calls)
	}
	return fmt.Sprintf("%s · %d tokens (%d input, %d cache read, %d cache write, %d output) · %s %s",
		calls, u.Total, u.Input, u.CacheRead, u.CacheWrite, u.Output, u.CostText(), u.Provenance)
}

// SessionUsageBlock is the usage block of session id's latest
// session.ended (the shape a live wrapper's status gives), nil when
// none carried one.
func SessionUsageBlock(root, id string) map[string]any {
	var b map[string]any
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err == nil && e.Receipt.Event == contract.EventSessionEnded {
			if u, ok := e.Receipt.TelemetrySummary["usage"].(map[string]any); ok {
				b = u
			}
		}
	}
	return b
}
