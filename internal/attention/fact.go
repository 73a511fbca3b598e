package attention

import "github.com/lifeloop/lifeloop/adapters"

// FactKind is what a Fact says (the plug-in API's vocabulary).
type FactKind = adapters.AttentionKind

// The kinds of facts: see adapters.AttentionKind.
const (
	Claim       = adapters.AttentionClaim
	TurnStarted = adapters.AttentionTurnStarted
	TurnEnded   = adapters.AttentionTurnEnded
	KeyTyped    = adapters.AttentionKeyTyped
)

// Fact is one piece of evidence, observed At: what a harness's
// adapters.AttentionReader returns, or a frame or key the wrapper saw.
type Fact = adapters.AttentionFact

// MaxDetail is the most runes a Detail keeps.
const MaxDetail = adapters.MaxAttentionDetail

// Bound makes s a Detail (adapters.BoundDetail).
func Bound(s string) string { return adapters.BoundDetail(s) }
