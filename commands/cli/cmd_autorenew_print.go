package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/commands/sessionview"
)

// decisionLine is one decision `lifeloop autorenew` prints: a renewal it
// asked for and how it ended, a report, or the end of a session.
type decisionLine struct {
	At      time.Time `json:"at"`
	Session string    `json:"session_id"`
	// Decision is renew, report, wait (what the policy now waits for),
	// done or error.
	Decision string `json:"decision"`
	// Result is how a renew ended: renewed, not_now, busy or failed.
	Result string           `json:"result,omitempty"`
	Reason autorenew.Reason `json:"reason,omitempty"`
	Detail string           `json:"detail,omitempty"`
	// Policy is the evidence (renewal.Policy.Map).
	Policy map[string]any `json:"policy,omitempty"`
}

// decisionPrinter prints decision lines of any number of sessions, one
// whole line at a time.
type decisionPrinter struct {
	mu   sync.Mutex
	out  io.Writer
	err  io.Writer
	json bool
}

func newDecisionPrinter(e *env, asJSON bool) *decisionPrinter {
	return &decisionPrinter{out: e.Out, err: e.Err, json: asJSON}
}

// print writes l as NDJSON or as one line for a person.
func (p *decisionPrinter) print(l decisionLine) {
	var s string
	if p.json {
		b, _ := json.Marshal(l)
		s = string(b)
	} else {
		s = decisionText(l)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintln(p.out, s)
}

// warn writes one warning about session id on stderr.
func (p *decisionPrinter) warn(id, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.err, "lifeloop: warning: session %s: %s\n", id, msg)
}

// decisionText is "15:04:05 ses_2C3D4E5F renew: renewed · pressure 71 % ≥ 70 % · …".
func decisionText(l decisionLine) string {
	head := l.Decision
	switch {
	case l.Result != "":
		head += ": " + l.Result
	case l.Reason != "":
		head += ": " + string(l.Reason)
	}
	parts := []string{l.At.Local().Format("15:04:05"), sessionview.Short(l.Session), head}
	var tail []string
	if l.Decision == "renew" {
		tail = append(tail, policyText(l.Policy)...)
	}
	if l.Detail != "" {
		tail = append(tail, l.Detail)
	}
	s := strings.Join(parts, " ")
	if len(tail) > 0 {
		s += " · " + strings.Join(tail, " · ")
	}
	return s
}

// policyText says the evidence of a renewal for a person.
func policyText(m map[string]any) []string {
	var out []string
	num := func(k string) float64 { f, _ := m[k].(float64); return f }
	i64 := func(k string) int64 {
		switch v := m[k].(type) {
		case int64:
			return v
		case int:
			return int64(v)
		case float64:
			return int64(v)
		}
		return 0
	}
	switch {
	case i64("threshold_tokens") > 0:
		out = append(out, fmt.Sprintf("pressure %d tokens ≥ %d tokens", i64("trigger_tokens"), i64("threshold_tokens")))
	case num("threshold_percent") > 0:
		out = append(out, fmt.Sprintf("pressure %s %% ≥ %s %%", percentText(num("trigger_percent")), percentText(num("threshold_percent"))))
	}
	if n := i64("renewals_this_hour"); n > 0 {
		out = append(out, fmt.Sprintf("%d of %d this hour", n, i64("per_hour")))
	}
	if b := i64("note_bytes"); b > 0 {
		out = append(out, fmt.Sprintf("note %d bytes (%v)", b, m["note_source"]))
	}
	return out
}
