package fleet

import "github.com/lifeloop/lifeloop/internal/pricing"

// usageFold keeps a session's usage as its stream carries it, as
// sessionview folds a ledger's: a turn's progress carries that turn's
// block (added up), a state change of the session's end carries the
// session's totals so far (which replace what was added up).
type usageFold struct {
	total, turns map[string]any
}

// turn adds a turn's block.
func (u *usageFold) turn(b map[string]any) { u.turns = addUsage(u.turns, b) }

// totals takes the session's totals so far.
func (u *usageFold) totals(b map[string]any) { u.total, u.turns = b, nil }

// block is the session's usage (nil: none seen).
func (u *usageFold) block() map[string]any {
	if u.total == nil {
		return u.turns
	}
	return addUsage(u.total, u.turns)
}

// addUsage is a usage block (docs/usage.md: calls, tokens by kind, cost
// with its usd and provenance) of a and b together: counts add up, the
// priced parts add up (no usd when neither is priced: never 0 for an
// unknown cost), the provenances join. Neither is changed.
func addUsage(a, b map[string]any) map[string]any {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := map[string]any{"calls": num(a["calls"]) + num(b["calls"])}
	ta, _ := a["tokens"].(map[string]any)
	tb, _ := b["tokens"].(map[string]any)
	if ta != nil || tb != nil {
		tok := map[string]any{}
		for _, m := range []map[string]any{ta, tb} {
			for k, v := range m {
				tok[k] = num(tok[k]) + num(v)
			}
		}
		out["tokens"] = tok
	}
	ca, _ := a["cost"].(map[string]any)
	cb, _ := b["cost"].(map[string]any)
	if ca != nil || cb != nil {
		cost := map[string]any{}
		pa, _ := ca["provenance"].(string)
		pb, _ := cb["provenance"].(string)
		cost["provenance"] = pricing.JoinProvenance(pa, pb)
		for _, c := range []map[string]any{ca, cb} {
			if v, ok := c["usd"]; ok && v != nil {
				cost["usd"] = num(cost["usd"]) + num(v)
			}
		}
		out["cost"] = cost
	}
	return out
}

// num reads a JSON number (float64, or json.Number as hcp.Decode leaves
// them); 0 when it is none.
func num(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case interface{ Float64() (float64, error) }:
		f, _ := n.Float64()
		return f
	case int:
		return float64(n)
	case int64:
		return float64(n)
	}
	return 0
}
