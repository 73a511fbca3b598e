package control

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestAttentionLineAndJSON: the status line says state, detail, source,
// for how long and the total waited; the JSON block has its documented
// keys and is absent when no attention is known.
func TestAttentionLineAndJSON(t *testing.T) {
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := Attention{State: "needs_permission", Since: since, Source: "hook", Detail: "Bash", WaitedSeconds: 12.4}
	if got, want := a.String(since.Add(7*time.Second)), "needs_permission (Bash) from hook, for 7 s; waited 12 s in all"; got != want {
		t.Errorf("line %q, want %q", got, want)
	}
	b, _ := json.Marshal(Status{Attention: &a})
	for _, k := range []string{`"attention":{`, `"state":"needs_permission"`, `"since":"2026-01-02T03:04:05Z"`, `"source":"hook"`, `"detail":"Bash"`, `"waited_seconds":12.4`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("status JSON lacks %s: %s", k, b)
		}
	}
	if b, _ := json.Marshal(Status{}); strings.Contains(string(b), "attention") {
		t.Errorf("status JSON without attention names it: %s", b)
	}
}
