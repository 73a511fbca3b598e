package pi

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

func TestBridgeArgs(t *testing.T) {
	dir := t.TempDir()
	hookCmd := []string{"/opt/life loop/lifeloop"}
	args, err := Harness{}.BridgeArgs(adapters.BridgeTarget{Argv: []string{"pi", "-p", "hi"}, SessionDir: dir, HookCommand: hookCmd})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, bridgeFile)
	if !slices.Equal(args, []string{"--extension", path}) {
		t.Fatalf("args %q", args)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("extension file %v %v", fi, err)
	}
	src, _ := os.ReadFile(path)
	if !strings.Contains(string(src), `const lifeloop = lifeloopBridge("pi", ["/opt/life loop/lifeloop"]);`+"\n") || !strings.HasSuffix(string(src), bridgeSource) {
		t.Errorf("extension source:\n%s", src)
	}
	// Every hook the spec names is one the extension calls.
	for _, h := range (Harness{}).Hooks().Names() {
		if !strings.Contains(string(src), `call("`+h+`"`) || !strings.Contains(string(src), `pi.on("`+h+`"`) {
			t.Errorf("the extension does not call hook %s", h)
		}
	}
	for _, argv := range [][]string{{"pi", "install", "npm:x"}, {"pi", "--version"}} {
		if args, err := (Harness{}).BridgeArgs(adapters.BridgeTarget{Argv: argv, SessionDir: dir, HookCommand: hookCmd}); args != nil || err != nil {
			t.Errorf("BridgeArgs(%q) = %q, %v", argv, args, err)
		}
	}
}

// TestBridgeSharedPath: with a shared folder, every launch of the same
// lifeloop program loads the extension from one path (Pi's compiler
// cache is keyed by it), written once.
func TestBridgeSharedPath(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "bridges")
	hookCmd := []string{"/bin/lifeloop"}
	var paths []string
	for range 2 {
		args, err := Harness{}.BridgeArgs(adapters.BridgeTarget{Argv: []string{"pi", "-p", "hi"}, SessionDir: t.TempDir(), SharedDir: shared, HookCommand: hookCmd})
		if err != nil || len(args) != 2 {
			t.Fatalf("args %q, %v", args, err)
		}
		paths = append(paths, args[1])
	}
	if paths[0] != paths[1] || filepath.Dir(paths[0]) != shared {
		t.Fatalf("extension paths %q, want one path in %s", paths, shared)
	}
	if src, _ := os.ReadFile(paths[0]); string(src) != string(BridgeSource(hookCmd)) {
		t.Errorf("shared extension holds:\n%s", src)
	}
	other, _ := Harness{}.BridgeArgs(adapters.BridgeTarget{Argv: []string{"pi", "-p", "hi"}, SessionDir: t.TempDir(), SharedDir: shared, HookCommand: []string{"/other/lifeloop"}})
	if other[1] == paths[0] {
		t.Error("another lifeloop program shares the extension of the first")
	}
}

// TestHooksMap maps the JSON the extension sends for one turn (the shape
// of bridge.ts's call) to moments with the session file's frame id.
func TestHooksMap(t *testing.T) {
	spec := Harness{}.Hooks()
	const frame = `"turn_id":"01a2#1"`
	tests := []struct {
		hook, input string
		want        []contract.Event
		accepts     contract.ManifestPlacementClass
	}{
		{"session_start", `{"session_id":"01a2","cwd":"/p","source":"startup"}`, []contract.Event{contract.EventSessionStarted}, contract.ManifestPreSession},
		{"before_agent_start", `{"session_id":"01a2",` + frame + `,"prompt":"hi"}`, []contract.Event{contract.EventFrameOpening}, contract.ManifestPreFrameLeading},
		{"agent_start", `{"session_id":"01a2",` + frame + `}`, []contract.Event{contract.EventFrameOpened}, ""},
		{"agent_end", `{"session_id":"01a2",` + frame + `}`, []contract.Event{contract.EventFrameEnding, contract.EventFrameEnded}, ""},
		{"session_shutdown", `{"session_id":"01a2","reason":"quit"}`, []contract.Event{contract.EventSessionEnding}, ""},
	}
	for _, tt := range tests {
		m, err := hooks.Map(spec, "pi", tt.hook, []byte(tt.input))
		if err != nil {
			t.Fatalf("%s: %v", tt.hook, err)
		}
		var got []contract.Event
		for _, mm := range m.Moments {
			got = append(got, mm.Event)
			if mm.Frame != nil && mm.Frame.FrameID != "01a2#1" {
				t.Errorf("%s: frame %s", tt.hook, mm.Frame.FrameID)
			}
		}
		if !slices.Equal(got, tt.want) || m.Accepts != tt.accepts || m.HarnessSessionID != "01a2" {
			t.Errorf("%s: %v accepts %q session %q, want %v %q", tt.hook, got, m.Accepts, m.HarnessSessionID, tt.want, tt.accepts)
		}
	}
	if FrameID("01a2", 1) != "01a2#1" {
		t.Error("FrameID")
	}
}

// TestBridgeUnreadableIsUnavailable: a bridge file that cannot be
// written or read back (here a directory where it goes, or a shared
// folder that is a file) is never given to Pi, which would exit 1 at
// launch: the bridge is unavailable and says which file and why.
func TestBridgeUnreadableIsUnavailable(t *testing.T) {
	hookCmd := []string{"/bin/lifeloop"}
	target := func(shared string) adapters.BridgeTarget {
		return adapters.BridgeTarget{Argv: []string{"pi", "-p", "hi"}, SessionDir: t.TempDir(), SharedDir: shared, HookCommand: hookCmd}
	}
	shared := filepath.Join(t.TempDir(), "bridges")
	args, err := Harness{}.BridgeArgs(target(shared))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(args[1]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(args[1], "index.ts"), 0o700); err != nil {
		t.Fatal(err)
	}
	notDir := filepath.Join(t.TempDir(), "bridges")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{shared, notDir} {
		args, err := Harness{}.BridgeArgs(target(dir))
		var unavailable *adapters.BridgeUnavailable
		if args != nil || !errors.As(err, &unavailable) || !strings.Contains(unavailable.Reason, dir) {
			t.Errorf("shared folder %s: args %q, error %v; want none and BridgeUnavailable naming the file", dir, args, err)
		}
	}
}
