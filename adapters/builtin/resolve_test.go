package builtin

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/adapters/generic"
)

func TestResolve(t *testing.T) {
	r := Default()
	tests := []struct {
		name string
		argv []string
		want string
	}{
		{"bare codex", []string{"codex"}, "codex"},
		{"codex path with args", []string{"/usr/local/bin/codex", "--model", "o3"}, "codex"},
		{"claude", []string{"claude", "--model", "opus"}, "claude"},
		{"claude exe", []string{`C:\tools\claude.exe`}, "claude"},
		{"gemini", []string{"gemini"}, "gemini"},
		{"opencode", []string{"/home/u/.opencode/bin/opencode", "run"}, "opencode"},
		{"pi", []string{"pi"}, "pi"},
		{"hermes", []string{"hermes", "chat"}, "hermes"},
		{"openclaw", []string{"openclaw"}, "openclaw"},
		{"npm bin symlink", []string{"/p/node_modules/.bin/codex"}, "codex"},
		{"node codex.js", []string{"node", "/x/lib/node_modules/@openai/codex/bin/codex.js", "exec", "hi"}, "codex"},
		{"node with flags", []string{"/usr/bin/node", "--no-warnings", "-r", "ts-node/register", "/p/codex.js"}, "codex"},
		{"node claude-code cli.js", []string{"node", "/p/node_modules/@anthropic-ai/claude-code/cli.js"}, "claude"},
		{"node unscoped claude-code cli.js", []string{"node", "/opt/claude-code/cli.js"}, "claude"},
		{"node unknown script", []string{"node", "/srv/app/server.js"}, "generic"},
		{"node alone", []string{"node"}, "generic"},
		{"npx codex", []string{"npx", "@openai/codex"}, "codex"},
		{"npx -y claude versioned", []string{"npx", "-y", "@anthropic-ai/claude-code@2.1.197", "--model", "opus"}, "claude"},
		{"npx --package", []string{"npx", "--package", "@google/gemini-cli", "gemini"}, "gemini"},
		{"npx -p", []string{"npx", "-p", "opencode-ai@latest", "opencode"}, "opencode"},
		{"bunx", []string{"bunx", "@openai/codex"}, "codex"},
		{"pnpm dlx", []string{"pnpm", "dlx", "@mariozechner/pi-coding-agent"}, "pi"},
		{"npm exec", []string{"npm", "exec", "--yes", "--", "openclaw"}, "openclaw"},
		{"env prefix", []string{"FOO=1", "BAR=2", "codex"}, "codex"},
		{"env command", []string{"/usr/bin/env", "-u", "HOME", "X=y", "claude"}, "claude"},
		{"env then node", []string{"env", "NODE_OPTIONS=--x", "node", "/p/@openai/codex/bin/codex.js"}, "codex"},
		{"claude native binary", []string{"/p/node_modules/@anthropic-ai/claude-code/bin/claude.exe", "-p", "hi"}, "claude"},
		{"node claude-code wrapper", []string{"node", "/p/node_modules/@anthropic-ai/claude-code/cli-wrapper.cjs"}, "claude"},
		{"codex vendored native binary", []string{"/p/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/codex/codex"}, "codex"},
		{"unknown", []string{"bash", "-c", "codex"}, "generic"},
		{"empty", nil, "generic"},
		{"only assignments", []string{"A=1"}, "generic"},
		{"case", []string{"/Applications/Codex"}, "codex"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Resolve(tt.argv).ID; got != tt.want {
				t.Errorf("Resolve(%q) = %q, want %q", tt.argv, got, tt.want)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	r := Default()
	tests := []struct {
		id, want string
	}{
		{"claude", "claude"},
		{"claude-code", "claude"},
		{"codex", "codex"},
		{"gemini-cli", "gemini"},
		{"generic", "generic"},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			a, err := r.Lookup(tt.id)
			if err != nil {
				t.Fatal(err)
			}
			if a.ID != tt.want {
				t.Errorf("Lookup(%q).ID = %q, want %q", tt.id, a.ID, tt.want)
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		_, err := r.Lookup("codx")
		if err == nil {
			t.Fatal("Lookup(codx) succeeded")
		}
		want := `unknown adapter "codx"; known: claude, codex, gemini, opencode, pi, hermes, openclaw, copilot, qwen, generic`
		if err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
	})
}

func TestPrepareLaunch(t *testing.T) {
	r := Default()
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		{"claude unchanged", []string{"claude", "--model", "opus"}, []string{"claude", "--model", "opus"}},
		{"generic unchanged", []string{"sh", "-c", "exit 3"}, []string{"sh", "-c", "exit 3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.argv)
			got := r.Resolve(tt.argv).PrepareLaunch(tt.argv)
			if !slices.Equal(got, tt.want) {
				t.Errorf("PrepareLaunch(%q) = %q, want %q", tt.argv, got, tt.want)
			}
			if !slices.Equal(tt.argv, in) {
				t.Errorf("PrepareLaunch modified its argument: %q", tt.argv)
			}
		})
	}
}

func TestNewRejectsDuplicates(t *testing.T) {
	tests := []struct {
		name     string
		adapters []adapters.Harness
		wantErr  string
	}{
		{"duplicate id", []adapters.Harness{codex.Harness{}, codex.Harness{}, generic.Harness{}}, `"codex" is used by both`},
		{"alias clashes with id", []adapters.Harness{fakeHarness{id: "x", aliases: []string{"codex"}}, codex.Harness{}, generic.Harness{}}, `"codex" is used by both "x" and "codex"`},
		{"command name clash", []adapters.Harness{fakeHarness{id: "x", names: []string{"claude"}}, claude.Harness{}, generic.Harness{}}, `command name "claude" is claimed by both`},
		{"empty alias", []adapters.Harness{fakeHarness{id: "x", aliases: []string{""}}, generic.Harness{}}, "empty id or alias"},
		{"no generic", []adapters.Harness{codex.Harness{}}, `no "generic" adapter`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := adapters.New(tt.adapters...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New() error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

// FuzzResolve checks that any command line resolves to a registered
// adapter without panicking, and that PrepareLaunch only ever inserts
// --no-daemon: the prepared line is the original with at most that one
// word added.
func FuzzResolve(f *testing.F) {
	f.Add("codex\x00resume\x00--last")
	f.Add("npx\x00-y\x00@anthropic-ai/claude-code@2.1.197")
	f.Add("env\x00-u\x00X\x00A=1\x00node\x00--\x00/p/@openai/codex/bin/codex.js\x00-i\x00a.png")
	f.Add("")
	f.Add("npx\x00--no-daemon\x00@openai/codex")
	r := Default()
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
		a := r.Resolve(argv)
		if _, err := r.Lookup(a.ID); err != nil {
			t.Fatalf("Resolve(%q) = unregistered adapter %q", argv, a.ID)
		}
		got := a.PrepareLaunch(argv)
		switch len(got) - len(argv) {
		case 0:
			if !slices.Equal(got, argv) {
				t.Fatalf("PrepareLaunch(%q) = %q: changed words", argv, got)
			}
		case 1:
			ok := false
			for i, w := range got {
				if w == "--no-daemon" && slices.Equal(slices.Delete(slices.Clone(got), i, i+1), argv) {
					ok = true
				}
			}
			if !ok {
				t.Fatalf("PrepareLaunch(%q) = %q: added something other than --no-daemon", argv, got)
			}
		default:
			t.Fatalf("PrepareLaunch(%q) = %q", argv, got)
		}
	})
}
