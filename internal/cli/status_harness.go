package cli

import (
	"fmt"
	"io"

	"github.com/lifeloop/lifeloop/internal/sessionview"
)

// harnessFacts are what `lifeloop status` says of the harness beyond the
// session record: the version the last session.started recorded and each
// harness drift the ledger reported.
type harnessFacts struct {
	Version string   `json:"harness_version,omitempty"`
	Drift   []string `json:"drift,omitempty"`
}

func factsOf(sum sessionview.Summary) harnessFacts {
	return harnessFacts{Version: sum.HarnessVersion, Drift: sum.Drift}
}

// print adds the facts to the status block, one line each.
func (h harnessFacts) print(w io.Writer) {
	if h.Version != "" {
		fmt.Fprintf(w, "harness   version %s\n", h.Version)
	}
	for _, d := range h.Drift {
		fmt.Fprintf(w, "drift     %s\n", d)
	}
}
