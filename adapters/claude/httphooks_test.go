package claude

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// TestBridgeHTTPHooks: a Claude of 2.1.197 or later whose posts would
// reach the loopback door directly gets HTTP hooks (SessionStart stays a
// program); an older or unknown Claude, a launch without a door, or a
// proxy Claude would send the posts through keep command hooks.
func TestBridgeHTTPHooks(t *testing.T) {
	door := func() (hooks.HTTPTarget, error) {
		return hooks.HTTPTarget{URL: "http://127.0.0.1:4000/hook", Token: "t0k"}, nil
	}
	types := func(t *testing.T, path string) map[string]string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Hooks map[string][]struct{ Hooks []struct{ Type string } }
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for name, g := range s.Hooks {
			out[name] = g[0].Hooks[0].Type
		}
		return out
	}
	tests := []struct {
		name    string
		version string // "" for no package.json
		env     []string
		door    bool
		want    string // the type of Stop's hook
	}{
		{"pinned", "2.1.197", nil, true, "http"},
		{"newer", "2.1.332", nil, true, "http"},
		{"older", "2.1.100", nil, true, "command"},
		{"unknown version", "", nil, true, "command"},
		{"no door", "2.1.197", nil, false, "command"},
		{"proxy", "2.1.197", []string{"HTTPS_PROXY=http://proxy:3128"}, true, "command"},
		{"proxy, loopback excluded", "2.1.197", []string{"http_proxy=http://proxy:3128", "NO_PROXY=localhost,127.0.0.1"}, true, "http"},
		{"proxy, nothing proxied", "2.1.197", []string{"HTTP_PROXY=http://proxy:3128", "no_proxy=*"}, true, "http"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := "/nonexistent/claude"
			if tc.version != "" {
				bin = fakeInstall(t, tc.version)
			}
			b := adapters.BridgeTarget{Argv: []string{bin, "-p", "hi"}, SessionDir: t.TempDir(), Env: tc.env, HookCommand: []string{"/bin/lifeloop"}}
			if tc.door {
				b.HookHTTP = door
			}
			args, err := Harness{}.BridgeArgs(b)
			if err != nil || len(args) != 2 {
				t.Fatalf("BridgeArgs: %v, %v", args, err)
			}
			got := types(t, args[1])
			if got["Stop"] != tc.want || got["UserPromptSubmit"] != tc.want || got["SessionStart"] != "command" {
				t.Errorf("hook types %v, want Stop and UserPromptSubmit %s, SessionStart command", got, tc.want)
			}
		})
	}
}
