package cli

import (
	"fmt"
	"io"

	"github.com/lifeloop/lifeloop/commands/sessionview"
)

// harnessFacts are what `lifeloop status` says of the harness beyond the
// session record: the version the last session.started recorded, each
// harness drift the ledger reported, and the current conversation's
// context pressure (absent before its first reading, and after a fresh
// renewal until the new conversation's first one).
type harnessFacts struct {
	// Session is the current harness session id (the latest
	// session.started's: a switch inside the process names a new one).
	Session  string          `json:"harness_session_id,omitempty"`
	Version  string          `json:"harness_version,omitempty"`
	Drift    []string        `json:"drift,omitempty"`
	Pressure *statusPressure `json:"pressure,omitempty"`
}

// statusPressure is the pressure of `lifeloop status --json`.
type statusPressure struct {
	Level   string  `json:"level"`
	Tokens  int64   `json:"tokens"`
	Window  int64   `json:"window"`
	Percent float64 `json:"percent"`
}

func factsOf(sum sessionview.Summary) harnessFacts {
	h := harnessFacts{Session: sum.HarnessSession, Version: sum.HarnessVersion, Drift: sum.Drift}
	if p := sum.Pressure; p != nil {
		h.Pressure = &statusPressure{Level: p.Level, Tokens: p.Tokens, Window: p.Window, Percent: max(p.Percent, 0)}
	}
	return h
}

// print adds the facts to the status block, one line each.
func (h harnessFacts) print(w io.Writer) {
	if h.Session != "" {
		fmt.Fprintf(w, "harness   session %s\n", h.Session)
	}
	if h.Version != "" {
		fmt.Fprintf(w, "harness   version %s\n", h.Version)
	}
	for _, d := range h.Drift {
		fmt.Fprintf(w, "drift     %s\n", d)
	}
}
