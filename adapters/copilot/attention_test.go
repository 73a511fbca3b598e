package copilot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// TestAttentionScreen: the screen Copilot's TUI drew up to its shell
// command's permission dialog (recorded by hand from
// TestAttentionCopilotPermission's terminal) is a needs_permission claim
// to the screen rules; the screen before the dialog is not.
func TestAttentionScreen(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "attention", "copilot-permission.screen.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rules := Harness{}.AttentionScreen()
	f, ok := attention.MatchScreen(rules, string(b), time.Unix(0, 0))
	if !ok || f.State != adapters.AttentionNeedsPermission || f.Evidence != "copilot:permission-dialog" {
		t.Errorf("the recorded dialog: %+v (found %v), want needs_permission", f, ok)
	}
	before, _, _ := strings.Cut(string(b), "╭")
	if f, ok := attention.MatchScreen(rules, before, time.Unix(0, 0)); ok {
		t.Errorf("the screen before the dialog matched: %+v", f)
	}
	if _, ok := (Harness{}).AttentionEvent([]byte(`{"hookName":"permissionRequest","toolName":"bash"}`), time.Unix(0, 0)); ok {
		t.Error("the permissionRequest hook read as attention: it runs for every tool call")
	}
}
