package control

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/attention"
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

// TestAttentionCarriesTheBlocksFields: status --json's attention has every
// key of the receipts' attention block (but the closed episode, which
// only the tick of a change carries), so a reader takes the same fields
// from either.
func TestAttentionCarriesTheBlocksFields(t *testing.T) {
	block := attention.Block{State: attention.NeedsPermission, Since: 1, Source: attention.SourceHook, Evidence: "e", Detail: "d",
		Episode: 1, Turn: 1, WaitedMs: map[attention.State]int64{attention.NeedsPermission: 1}}
	full := Attention{State: "needs_permission", Since: time.UnixMilli(1), Source: "hook", Detail: "d", WaitedSeconds: 0.001,
		SinceEpochMs: 1, Evidence: "e", Episode: 1, Turn: 1, WaitedMs: map[string]int64{"needs_permission": 1}}
	var have map[string]any
	b, _ := json.Marshal(full)
	if err := json.Unmarshal(b, &have); err != nil {
		t.Fatal(err)
	}
	for k, v := range block.Map() {
		if k == "closed" {
			continue
		}
		got, ok := have[k]
		if !ok {
			t.Errorf("status attention lacks the block's %q", k)
			continue
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(v)
		if string(g) != string(w) {
			t.Errorf("status attention %s = %s, the block's = %s", k, g, w)
		}
	}
}
