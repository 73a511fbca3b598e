package claude_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
)

// mustLookup returns the registry entry of the harness with id; only
// claude lives here.
func mustLookup(t *testing.T, id string) *adapters.Adapter {
	t.Helper()
	if id != "claude" {
		t.Fatalf("no adapter %q in adapters/claude", id)
	}
	return adapters.AdapterOf(claude.Harness{})
}

func TestPlaceAtLaunch(t *testing.T) {
	const text = `{"payloads":[{"payload_id":"pay_1","payload_kind":"k","body":"a \"b\"\n"}]}`
	tests := []struct {
		name    string
		adapter string
		argv    []string
		want    []string
		wantOK  bool
	}{
		{"claude interactive", "claude", []string{"claude"}, []string{"claude", "--append-system-prompt", text}, true},
		{"claude print", "claude", []string{"claude", "-p", "hi"}, []string{"claude", "--append-system-prompt", text, "-p", "hi"}, true},
		{"claude via node", "claude", []string{"node", "/x/@anthropic-ai/claude-code/cli.js", "-p", "hi"},
			[]string{"node", "/x/@anthropic-ai/claude-code/cli.js", "--append-system-prompt", text, "-p", "hi"}, true},
		{"claude merges an existing flag", "claude", []string{"claude", "--model", "m", "--append-system-prompt", "mine"},
			[]string{"claude", "--model", "m", "--append-system-prompt", "mine\n\n" + text}, true},
		{"claude merges an inline flag", "claude", []string{"claude", "--append-system-prompt=mine"},
			[]string{"claude", "--append-system-prompt=mine\n\n" + text}, true},
		{"claude flag value is not the flag", "claude", []string{"claude", "--model", "--append-system-prompt"},
			[]string{"claude", "--append-system-prompt", text, "--model", "--append-system-prompt"}, true},
		{"claude subcommand", "claude", []string{"claude", "mcp", "list"}, []string{"claude", "mcp", "list"}, false},
		{"claude help", "claude", []string{"claude", "--help"}, []string{"claude", "--help"}, false},
		{"empty argv", "claude", nil, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustLookup(t, tt.adapter)
			orig := slices.Clone(tt.argv)
			got, target, ok := a.PlaceAtLaunch(tt.argv, text)
			if ok != tt.wantOK || !slices.Equal(got, tt.want) {
				t.Fatalf("PlaceAtLaunch(%q) = %q, %v; want %q, %v", tt.argv, got, ok, tt.want, tt.wantOK)
			}
			wantTarget := contract.ManifestPreSession
			if strings.Contains(tt.name, "codex") && strings.Contains(tt.name, "resume") {
				wantTarget = contract.ManifestPreFrameLeading
			}
			if ok && target != wantTarget {
				t.Errorf("target %q, want %q", target, wantTarget)
			}
			if !ok && target != "" {
				t.Errorf("target %q when not placed", target)
			}
			if !slices.Equal(tt.argv, orig) {
				t.Errorf("argv modified: %q", tt.argv)
			}
		})
	}
}

func TestRelaunchArgv(t *testing.T) {
	const id = "3f2a"
	tests := []struct {
		name    string
		adapter string
		argv    []string
		resume  bool
		id      string
		want    []string
		wantOK  bool
	}{
		{"claude resume", "claude", []string{"claude"}, true, id, []string{"claude", "--resume", id}, true},
		{"claude resume drops interactive prompt", "claude", []string{"claude", "--model", "m", "fix it"}, true, id,
			[]string{"claude", "--resume", id, "--model", "m"}, true},
		{"claude resume keeps print prompt", "claude", []string{"claude", "-p", "fix it"}, true, id,
			[]string{"claude", "--resume", id, "-p", "fix it"}, true},
		{"claude resume replaces pickers", "claude", []string{"claude", "--resume", "old", "--fork-session", "--session-id", "u", "-c"}, true, id,
			[]string{"claude", "--resume", id}, true},
		{"claude resume after variadic", "claude", []string{"claude", "--add-dir", "a", "b", "--verbose"}, true, id,
			[]string{"claude", "--resume", id, "--add-dir", "a", "b", "--verbose"}, true},
		{"claude fresh drops pickers keeps prompt", "claude", []string{"claude", "-r", "old", "fix it"}, false, "",
			[]string{"claude", "fix it"}, true},
		{"claude resume without id", "claude", []string{"claude"}, true, "", []string{"claude"}, false},
		{"claude subcommand", "claude", []string{"claude", "doctor"}, false, "", []string{"claude", "doctor"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mustLookup(t, tt.adapter)
			orig := slices.Clone(tt.argv)
			got, ok := a.RelaunchArgv(tt.argv, tt.id, tt.resume)
			if ok != tt.wantOK || !slices.Equal(got, tt.want) {
				t.Fatalf("RelaunchArgv(%q, %q, %v) = %q, %v; want %q, %v", tt.argv, tt.id, tt.resume, got, ok, tt.want, tt.wantOK)
			}
			if !slices.Equal(tt.argv, orig) {
				t.Errorf("argv modified: %q", tt.argv)
			}
		})
	}
}

func TestRedactPlacement(t *testing.T) {
	const text = `{"payloads":[{"payload_id":"p","payload_kind":"k","body":"SECRET"}]}`
	for _, id := range []string{"claude"} {
		for _, argv := range [][]string{
			{id},
			{id, "--append-system-prompt", "mine"},
			{id, "resume", "abc", "go on"},
			{id, "exec", "resume", "abc", "go on"},
		} {
			t.Run(strings.Join(argv, " "), func(t *testing.T) {
				placed, _, ok := mustLookup(t, id).PlaceAtLaunch(argv, text)
				if !ok {
					t.Skip("no placement for this command line")
				}
				got := adapters.RedactPlacement(placed)
				if strings.Contains(strings.Join(got, " "), "SECRET") {
					t.Fatalf("RedactPlacement(%q) = %q still carries the body", placed, got)
				}
				if !strings.Contains(strings.Join(got, " "), "<continuation payloads withheld: ") {
					t.Errorf("no placeholder in %q", got)
				}
				if len(got) != len(placed) || got[0] != placed[0] {
					t.Errorf("shape changed: %q → %q", placed, got)
				}
				if strings.Contains(strings.Join(placed, " "), "mine") && !strings.Contains(strings.Join(got, " "), "mine") {
					t.Errorf("the user's own text before the envelope was withheld: %q", got)
				}
			})
		}
	}
	if got := adapters.RedactPlacement([]string{"claude", "-p", "hi"}); !slices.Equal(got, []string{"claude", "-p", "hi"}) {
		t.Errorf("a command line without placement changed: %q", got)
	}
}

func TestExternalizePlacement(t *testing.T) {
	const text = `{"payloads":[{"payload_id":"p","payload_kind":"k","body":"SECRET"}]}`
	tests := []struct {
		name, id string
		argv     []string
		want     []string // nil: unchanged
		stored   string
	}{
		{"claude new session", "claude", []string{"claude", "-p", "hi"},
			[]string{"claude", "--append-system-prompt-file", "F", "-p", "hi"}, text},
		{"merged with the user's own text", "claude", []string{"claude", "--append-system-prompt", "mine", "-p", "hi"},
			[]string{"claude", "--append-system-prompt-file", "F", "-p", "hi"}, "mine\n\n" + text},
		{"the user's own file is kept", "claude", []string{"claude", "--append-system-prompt-file", "u.txt"}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// With the caller's opt-in to a body in argv: where the
			// externalizer leaves the text in argv, the adapter refuses the
			// placement otherwise (checked below).
			a := mustLookup(t, tc.id).WithArgvPayloads()
			placed, _, ok := a.PlaceAtLaunch(tc.argv, text)
			if !ok {
				t.Fatalf("no placement for %q", tc.argv)
			}
			if _, _, privateOK := mustLookup(t, tc.id).PlaceAtLaunch(tc.argv, text); privateOK != (tc.want != nil) {
				t.Errorf("without the opt-in, placed %v; want %v", privateOK, tc.want != nil)
			}
			var stored string
			got, err := a.ExternalizePlacement(placed, adapters.PlacementFiles{Write: func(s string) (string, error) { stored = s; return "F", nil }})
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == nil {
				want = placed
			}
			if !slices.Equal(got, want) || stored != tc.stored {
				t.Errorf("ExternalizePlacement(%q) = %q, stored %q; want %q, %q", placed, got, stored, want, tc.stored)
			}
		})
	}
	// Without a placed envelope nothing moves, even the user's own text.
	a := mustLookup(t, "claude")
	argv := []string{"claude", "--append-system-prompt", "mine"}
	if got, _ := a.ExternalizePlacement(argv, adapters.PlacementFiles{Write: func(string) (string, error) { t.Error("write called"); return "", nil }}); !slices.Equal(got, argv) {
		t.Errorf("changed %q → %q", argv, got)
	}
}

func TestPinClaudeSession(t *testing.T) {
	tests := []struct {
		name string
		argv []string
		pin  bool
	}{
		{"print mode", []string{"claude", "-p", "hi"}, true},
		{"tui", []string{"/x/claude"}, true},
		{"explicit id", []string{"claude", "--session-id", "abc"}, false},
		{"explicit id =", []string{"claude", "--session-id=abc"}, false},
		{"continue", []string{"claude", "-p", "--continue", "more"}, false},
		{"resume", []string{"claude", "-r", "abc"}, false},
		{"prompt that looks like a flag after --", []string{"claude", "-p", "--", "--continue"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, id := adapters.AdapterOf(claude.Harness{}).PinSession(slices.Clone(tc.argv))
			if !tc.pin {
				if id != "" || !slices.Equal(out, tc.argv) {
					t.Fatalf("pinned %q: %v", id, out)
				}
				return
			}
			if len(id) != 36 || id[14] != '4' {
				t.Fatalf("id %q is not a v4 UUID", id)
			}
			i := slices.Index(out, "--session-id")
			if i < 1 || out[i+1] != id || len(out) != len(tc.argv)+2 || out[0] != tc.argv[0] {
				t.Fatalf("argv %v", out)
			}
		})
	}
}

func TestResumedSession(t *testing.T) {
	const id = "0b7e3c2a-1f2d-4c5e-8a9b-0c1d2e3f4a5b"
	for _, c := range []struct {
		args   []string
		id     string
		resume bool
	}{
		{[]string{"-p", "--resume", id, "hi"}, id, true},
		{[]string{"-r=" + id}, id, true},
		{[]string{"-c", "-p", "hi"}, "", true},
		{[]string{"--continue"}, "", true},
		{[]string{"--resume"}, "", false},
		{[]string{"--resume", "search words"}, "", false},
		{[]string{"--resume", id, "--fork-session"}, "", false},
		{[]string{"--session-id", id}, "", false},
		{[]string{"-p", "hi"}, "", false},
		{[]string{"mcp", "list"}, "", false},
	} {
		got, ok := claude.Harness{}.ResumedSession(append([]string{"claude"}, c.args...), 1)
		if got != c.id || ok != c.resume {
			t.Errorf("%v: %q %v, want %q %v", c.args, got, ok, c.id, c.resume)
		}
	}
}
