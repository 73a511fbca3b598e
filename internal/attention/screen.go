package attention

import (
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// ScreenRule names text a harness's dialog draws and the state it shows
// (a harness's adapters.AttentionReader gives its rules).
type ScreenRule = adapters.AttentionScreenRule

// MatchScreen looks for the rules' text in output already stripped of
// escape sequences (the bytes drawn since the last match) and returns a
// screen claim for the first rule found.
func MatchScreen(rules []ScreenRule, stripped string, at time.Time) (Fact, bool) {
	for _, r := range rules {
		if r.Text != "" && strings.Contains(stripped, r.Text) {
			return Fact{At: at, Kind: Claim, Source: SourceScreen, State: r.State, Evidence: r.Evidence}, true
		}
	}
	return Fact{}, false
}
