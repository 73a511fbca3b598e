package qwen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// TestAttentionScreen: the screen Qwen Code's TUI drew up to its shell
// command's permission dialog (0.24.4 against the mock, escapes taken
// out) is a needs_permission claim to the screen rules; the screen
// before the dialog is not.
func TestAttentionScreen(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "attention", "qwen-permission.screen.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rules := Harness{}.AttentionScreen()
	f, ok := attention.MatchScreen(rules, string(b), time.Unix(0, 0))
	if !ok || f.State != adapters.AttentionNeedsPermission || f.Evidence != "qwen:shell-confirmation" {
		t.Errorf("the recorded dialog: %+v (found %v), want needs_permission", f, ok)
	}
	before, _, _ := strings.Cut(string(b), "? Shell")
	if f, ok := attention.MatchScreen(rules, before, time.Unix(0, 0)); ok {
		t.Errorf("the screen before the dialog matched: %+v", f)
	}
}
