package cli

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
)

// The resume of a background renewal runs with lifeloop as the harness's
// process wrapper, chaining the person's own, whatever the environment
// renew was run in: a service the resume starts anew must wrap the
// resumed session.
func TestWrappedEnvForTheResume(t *testing.T) {
	ad, err := builtin.Default().Lookup("claude")
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	wrapper := func(env []string) []string {
		t.Helper()
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, "CLAUDE_CODE_PROCESS_WRAPPER="); ok {
				var words []string
				if err := json.Unmarshal([]byte(v), &words); err != nil {
					t.Fatalf("wrapper %q: %v", v, err)
				}
				return words
			}
		}
		return nil
	}
	got := wrappedEnv(ad, []string{"HOME=" + home, "PATH=/bin"})
	if w := wrapper(got); !slices.Equal(w, []string{self, "procwrap", "--adapter", "claude"}) {
		t.Errorf("no wrapper set: got %q", w)
	}
	own := []string{"HOME=" + home, "CLAUDE_CODE_PROCESS_WRAPPER=/corp/own --x"}
	got = wrappedEnv(ad, own)
	if w := wrapper(got); !slices.Equal(w, []string{self, "procwrap", "--adapter", "claude", "--chain", `["/corp/own","--x"]`}) {
		t.Errorf("the person's wrapper not chained: %q", w)
	}
	if n := len(slices.DeleteFunc(slices.Clone(got), func(kv string) bool { return !strings.HasPrefix(kv, "CLAUDE_CODE_PROCESS_WRAPPER=") })); n != 1 {
		t.Errorf("%d wrapper variables", n)
	}
	already := wrappedEnv(ad, got)
	if !slices.Equal(already, got) {
		t.Errorf("lifeloop's own wrapper changed: %q → %q", got, already)
	}
}
