package notify

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/internal/attention"
)

// Kinds are the attention states a notifier can announce: the waiting
// ones.
var Kinds = []string{
	string(attention.NeedsPermission),
	string(attention.NeedsAnswer),
	string(attention.WaitingForInput),
	string(attention.StoppedOnError),
}

// waitingKind reports whether kind is a waiting state.
func waitingKind(kind string) bool { return attention.State(kind).Waiting() }

// ParseKinds reads a comma-separated list of kinds (run's --notify-on);
// empty means every waiting kind (nil).
func ParseKinds(list string) ([]string, error) {
	var kinds []string
	for _, k := range strings.Split(list, ",") {
		k = strings.TrimSpace(k)
		if k == "" || slices.Contains(kinds, k) {
			continue
		}
		if !waitingKind(k) {
			return nil, fmt.Errorf("unknown kind %q; use a comma-separated list of %s", k, strings.Join(Kinds, ", "))
		}
		kinds = append(kinds, k)
	}
	return kinds, nil
}
