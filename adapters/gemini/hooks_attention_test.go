package gemini

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// TestNotificationAttends: lifeloop installs Notification for attention
// only (host apply writes it with the others); each Notification the real
// TUI made at its permission dialogs
// (testdata/attention/gemini-permission.hooks.jsonl) maps to no moment,
// and the attention reader reads it as needs_permission.
func TestNotificationAttends(t *testing.T) {
	spec := Harness{}.Hooks()
	if !spec.Attends("Notification") || !spec.MayAttend("Notification") {
		t.Fatalf("Notification is not installed for attention: %v", spec.Names())
	}
	if s := string(hooks.SettingsFile(spec, []string{"/bin/lifeloop"}, nil)); !strings.Contains(s, "--hook Notification") {
		t.Errorf("the settings file runs no Notification hook:\n%s", s)
	}
	f, err := os.Open("testdata/attention/gemini-permission.hooks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		var rec struct {
			Stdin json.RawMessage `json:"stdin"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		var in hooks.Input
		if json.Unmarshal(rec.Stdin, &in) != nil || in.HookEventName != "Notification" {
			continue
		}
		n++
		m, err := hooks.Map(spec, "gemini", "Notification", rec.Stdin)
		if err != nil || len(m.Moments) != 0 {
			t.Errorf("Notification maps to %+v, %v; want no moment", m.Moments, err)
		}
		if fact, ok := (Harness{}).AttentionEvent(rec.Stdin, time.Now()); !ok || fact.State != adapters.AttentionNeedsPermission {
			t.Errorf("Notification reads as %+v, %v; want needs_permission", fact, ok)
		}
	}
	if n != 2 {
		t.Errorf("%d Notification calls in the recording, want 2", n)
	}
}
