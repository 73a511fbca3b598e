package adapters

import (
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

func mustLookup(t *testing.T, id string) *Adapter {
	t.Helper()
	a, err := Default().Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	return a
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
		{"codex tui", "codex", []string{"codex"}, []string{"codex", "-c", "developer_instructions=" + TOMLString(text)}, true},
		{"codex exec", "codex", []string{"codex", "exec", "--skip-git-repo-check", "hi"},
			[]string{"codex", "-c", "developer_instructions=" + TOMLString(text), "exec", "--skip-git-repo-check", "hi"}, true},
		{"codex resume", "codex", []string{"codex", "--no-daemon", "resume", "abc"},
			[]string{"codex", "--no-daemon", "resume", "abc", text}, true},
		{"codex resume with prompt", "codex", []string{"codex", "resume", "-m", "x", "abc", "go on"},
			[]string{"codex", "resume", "-m", "x", "abc", text + "\n\ngo on"}, true},
		{"codex resume last", "codex", []string{"codex", "resume", "--last"},
			[]string{"codex", "resume", "--last", text}, true},
		{"codex exec resume", "codex", []string{"codex", "exec", "--skip-git-repo-check", "resume", "abc", "go on"},
			[]string{"codex", "exec", "--skip-git-repo-check", "resume", "abc", text + "\n\ngo on"}, true},
		{"codex exec resume stdin prompt", "codex", []string{"codex", "exec", "resume", "abc", "-"},
			[]string{"codex", "exec", "resume", "abc", "-"}, false},
		{"codex own developer_instructions", "codex", []string{"codex", "-c", "developer_instructions=\"x\""},
			[]string{"codex", "-c", "developer_instructions=\"x\""}, false},
		{"codex login", "codex", []string{"codex", "login"}, []string{"codex", "login"}, false},
		{"generic", "generic", []string{"bash"}, []string{"bash"}, false},
		{"gemini", "gemini", []string{"gemini"}, []string{"gemini"}, false},
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

func TestTOMLString(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `""`},
		{`plain`, `"plain"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"l1\nl2\r\t", `"l1\nl2\r\t"`},
		{"\x00\x1f\x7f", `"\u0000\u001F\u007F"`},
		{"é€😀", `"é€😀"`},
		{"bad\xffbyte", "\"bad\uFFFDbyte\""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := TOMLString(tt.in); got != tt.want {
				t.Errorf("TOMLString(%q) = %s, want %s", tt.in, got, tt.want)
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
		{"codex tui resume", "codex", []string{"codex", "-m", "x", "fix it"}, true, id, []string{"codex", "-m", "x", "resume", id}, true},
		{"codex tui fresh", "codex", []string{"codex", "-m", "x", "fix it"}, false, "", []string{"codex", "-m", "x", "fix it"}, true},
		{"codex resume last", "codex", []string{"codex", "resume", "--last"}, true, id, []string{"codex", "resume", id}, true},
		{"codex fork fresh", "codex", []string{"codex", "fork", "abc"}, false, "", []string{"codex"}, true},
		{"codex exec resume", "codex", []string{"codex", "exec", "--skip-git-repo-check", "hi"}, true, id,
			[]string{"codex", "exec", "--skip-git-repo-check", "resume", id, "hi"}, true},
		{"codex exec fresh", "codex", []string{"codex", "exec", "-o", "f", "hi"}, false, "", []string{"codex", "exec", "-o", "f", "hi"}, true},
		{"codex exec resume again", "codex", []string{"codex", "exec", "resume", "old", "more"}, true, id,
			[]string{"codex", "exec", "resume", id, "more"}, true},
		{"codex exec resume last", "codex", []string{"codex", "exec", "resume", "--last", "more"}, true, id,
			[]string{"codex", "exec", "resume", id, "more"}, true},
		{"codex exec resume to fresh", "codex", []string{"codex", "exec", "resume", "old", "more"}, false, "",
			[]string{"codex", "exec", "more"}, true},
		{"codex mcp", "codex", []string{"codex", "mcp", "list"}, false, "", []string{"codex", "mcp", "list"}, false},
		{"generic", "generic", []string{"bash", "-l"}, false, "", []string{"bash", "-l"}, false},
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
	for _, id := range []string{"claude", "codex"} {
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
				got := RedactPlacement(placed)
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
	if got := RedactPlacement([]string{"claude", "-p", "hi"}); !slices.Equal(got, []string{"claude", "-p", "hi"}) {
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
		{"codex stays in argv", "codex", []string{"codex", "exec", "hi"}, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mustLookup(t, tc.id)
			placed, _, ok := a.PlaceAtLaunch(tc.argv, text)
			if !ok {
				t.Fatalf("no placement for %q", tc.argv)
			}
			var stored string
			got, err := a.ExternalizePlacement(placed, func(s string) (string, error) { stored = s; return "F", nil })
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
	if got, _ := a.ExternalizePlacement(argv, func(string) (string, error) { t.Error("write called"); return "", nil }); !slices.Equal(got, argv) {
		t.Errorf("changed %q → %q", argv, got)
	}
}

// FuzzLaunchArgv: for any command line, PlaceAtLaunch, RelaunchArgv and
// RedactPlacement never panic nor modify their input; a placement keeps
// the program, puts the text in exactly one element, and RedactPlacement
// withholds it.
func FuzzLaunchArgv(f *testing.F) {
	for _, s := range []string{
		"claude", "claude\x00-p\x00hi", "claude\x00--append-system-prompt", "claude\x00--add-dir\x00a\x00b",
		"codex", "codex\x00exec\x00resume\x00--last", "codex\x00resume", "codex\x00exec\x00resume\x00id\x00-",
		"codex\x00-c\x00developer_instructions=1", "npx\x00@openai/codex\x00fork", "node\x00/x/@anthropic-ai/claude-code/cli.js\x00-r",
		"codex\x00--config=developer_instructions=x", "", "bash\x00-c\x00x",
	} {
		f.Add(s, "3f2a", true)
	}
	reg := Default()
	const text = `{"payloads":[{"payload_id":"p","payload_kind":"k","body":"FUZZ-SECRET"}]}`
	f.Fuzz(func(t *testing.T, line, id string, resume bool) {
		var argv []string
		if line != "" {
			argv = strings.Split(line, "\x00")
		}
		orig := slices.Clone(argv)
		a := reg.Resolve(argv)
		placed, target, ok := a.PlaceAtLaunch(argv, text)
		if !slices.Equal(argv, orig) {
			t.Fatalf("PlaceAtLaunch modified %q", orig)
		}
		if ok {
			if target == "" || placed[0] != argv[0] {
				t.Fatalf("PlaceAtLaunch(%q) = %q, %q", argv, placed, target)
			}
			n := 0
			for _, s := range placed {
				if strings.Contains(s, "FUZZ-SECRET") {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("PlaceAtLaunch(%q) = %q: text in %d elements", argv, placed, n)
			}
			if strings.Contains(strings.Join(RedactPlacement(placed), "\x00"), "FUZZ-SECRET") {
				t.Fatalf("RedactPlacement(%q) kept the body", placed)
			}
		} else if !slices.Equal(placed, argv) {
			t.Fatalf("PlaceAtLaunch(%q) not ok but changed argv to %q", argv, placed)
		}
		out, rok := a.RelaunchArgv(argv, id, resume)
		if !slices.Equal(argv, orig) {
			t.Fatalf("RelaunchArgv modified %q", orig)
		}
		if rok && (len(out) == 0 || out[0] != argv[0]) {
			t.Fatalf("RelaunchArgv(%q) = %q", argv, out)
		}
	})
}
