package codex

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

func TestPrepareLaunch(t *testing.T) {
	a := adapters.AdapterOf(Harness{})
	tests := []struct {
		name string
		argv []string
		want []string
	}{
		{"codex tui", []string{"codex"}, []string{"codex", "--no-daemon"}},
		{"codex tui with prompt", []string{"codex", "fix the bug"}, []string{"codex", "--no-daemon", "fix the bug"}},
		{"codex tui with options", []string{"codex", "-m", "exec", "-c", "x=1"}, []string{"codex", "--no-daemon", "-m", "exec", "-c", "x=1"}},
		{"codex resume", []string{"codex", "resume", "--last"}, []string{"codex", "--no-daemon", "resume", "--last"}},
		{"codex fork", []string{"codex", "fork"}, []string{"codex", "--no-daemon", "fork"}},
		{"codex exec", []string{"codex", "exec", "hi"}, []string{"codex", "exec", "hi"}},
		{"codex exec alias", []string{"codex", "-m", "o3", "e", "hi"}, []string{"codex", "-m", "o3", "e", "hi"}},
		{"codex login", []string{"codex", "login"}, []string{"codex", "login"}},
		{"codex user chose", []string{"codex", "--no-daemon"}, []string{"codex", "--no-daemon"}},
		{"codex remote", []string{"codex", "--remote", "ws://127.0.0.1:1"}, []string{"codex", "--remote", "ws://127.0.0.1:1"}},
		{"codex remote after prompt", []string{"codex", "hi", "--remote=unix://"}, []string{"codex", "hi", "--remote=unix://"}},
		{"codex image swallows words", []string{"codex", "-i", "a.png", "exec"}, []string{"codex", "--no-daemon", "-i", "a.png", "exec"}},
		{"codex after --", []string{"codex", "--", "exec"}, []string{"codex", "--no-daemon", "--", "exec"}},
		{"node codex", []string{"node", "/p/@openai/codex/bin/codex.js"}, []string{"node", "/p/@openai/codex/bin/codex.js", "--no-daemon"}},
		{"npx codex exec", []string{"npx", "-y", "@openai/codex", "exec", "x"}, []string{"npx", "-y", "@openai/codex", "exec", "x"}},
		{"env codex", []string{"A=1", "codex", "hi"}, []string{"A=1", "codex", "--no-daemon", "hi"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.argv)
			got := a.PrepareLaunch(tt.argv)
			if !slices.Equal(got, tt.want) {
				t.Errorf("PrepareLaunch(%q) = %q, want %q", tt.argv, got, tt.want)
			}
			if !slices.Equal(tt.argv, in) {
				t.Errorf("PrepareLaunch modified its argument: %q", tt.argv)
			}
		})
	}
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The harness's placement, with the caller's opt-in to a body
			// in argv; without it, only the private placements remain.
			a := adapters.AdapterOf(Harness{}).WithArgvPayloads()
			orig := slices.Clone(tt.argv)
			got, target, ok := a.PlaceAtLaunch(tt.argv, text)
			if ok != tt.wantOK || !slices.Equal(got, tt.want) {
				t.Fatalf("PlaceAtLaunch(%q) = %q, %v; want %q, %v", tt.argv, got, ok, tt.want, tt.wantOK)
			}
			wantTarget := contract.ManifestPreSession
			if strings.Contains(tt.name, "codex") && strings.Contains(tt.name, "resume") {
				wantTarget = contract.ManifestPreFrameLeading
			}
			_, _, privateOK := adapters.AdapterOf(Harness{}).PlaceAtLaunch(tt.argv, text)
			if wantPrivate := tt.wantOK && wantTarget == contract.ManifestPreSession; privateOK != wantPrivate {
				t.Errorf("without the opt-in, placed %v; want %v (a resumed thread's prompt is argv only)", privateOK, wantPrivate)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := adapters.AdapterOf(Harness{})
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
	for _, id := range []string{"codex"} {
		for _, argv := range [][]string{
			{id},
			{id, "--append-system-prompt", "mine"},
			{id, "resume", "abc", "go on"},
			{id, "exec", "resume", "abc", "go on"},
		} {
			t.Run(strings.Join(argv, " "), func(t *testing.T) {
				placed, _, ok := adapters.AdapterOf(Harness{}).WithArgvPayloads().PlaceAtLaunch(argv, text)
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
}

func TestExternalizePlacement(t *testing.T) {
	const text = `{"payloads":[{"payload_id":"p","payload_kind":"k","body":"SECRET \"q\"\n"}]}`
	profile := "developer_instructions = " + TOMLString(text) + "\n"
	tests := []struct {
		name   string
		argv   []string
		env    []string
		want   []string // nil: unchanged (no file form)
		dir    string
		stored string
	}{
		{"exec", []string{"codex", "exec", "--skip-git-repo-check", "hi"}, []string{"CODEX_HOME=/ch"},
			[]string{"codex", "-p", "lifeloop-placement-1", "exec", "--skip-git-repo-check", "hi"}, "/ch", profile},
		{"tui", []string{"codex", "--no-daemon", "-m", "o3"}, []string{"HOME=/h"},
			[]string{"codex", "-p", "lifeloop-placement-1", "--no-daemon", "-m", "o3"}, "/h/.codex", profile},
		{"the user's own profile", []string{"codex", "exec", "-p", "work", "hi"}, []string{"HOME=/h"}, nil, "", ""},
		{"resumed thread", []string{"codex", "resume", "abc"}, []string{"HOME=/h"}, nil, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			placed, _, ok := adapters.AdapterOf(Harness{}).WithArgvPayloads().PlaceAtLaunch(tc.argv, text)
			if !ok {
				t.Fatalf("no placement for %q", tc.argv)
			}
			var dir, stored string
			files := adapters.PlacementFiles{
				Env:   tc.env,
				Write: func(string) (string, error) { t.Error("Write called"); return "", nil },
				WriteIn: func(d, suffix, s string) (string, error) {
					dir, stored = d, s
					return d + "/" + adapters.PlacementFilePrefix + "1" + suffix, nil
				},
			}
			got, err := adapters.AdapterOf(Harness{}).ExternalizePlacement(placed, files)
			if tc.want == nil {
				if err != nil || !slices.Equal(got, placed) || dir != "" {
					t.Errorf("ExternalizePlacement(%q) = %q, %v; want it unchanged", placed, got, err)
				}
				if err := adapters.AdapterOf(Harness{}).ArgvPlacementError(tc.argv, ""); !errors.Is(err, adapters.ErrPayloadInArgv) {
					t.Errorf("ArgvPlacementError(%q) = %v, want ErrPayloadInArgv", tc.argv, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || dir != tc.dir || stored != tc.stored {
				t.Errorf("ExternalizePlacement(%q) = %q, %v, stored %q in %q; want %q, %q in %q", placed, got, err, stored, dir, tc.want, tc.stored, tc.dir)
			}
		})
	}
	placed, _, _ := adapters.AdapterOf(Harness{}).PlaceAtLaunch([]string{"codex", "exec", "hi"}, text)
	if _, err := adapters.AdapterOf(Harness{}).ExternalizePlacement(placed, adapters.PlacementFiles{Env: []string{"PATH=/bin"}}); err == nil {
		t.Error("no error without CODEX_HOME and HOME")
	}
}

// FuzzPrepareLaunch is the Codex half of adapters' FuzzResolve: whatever
// the command line, PrepareLaunch only ever inserts --no-daemon: the
// prepared line is the original with at most that one word added.
func FuzzPrepareLaunch(f *testing.F) {
	f.Add("codex\x00resume\x00--last")
	f.Add("env\x00-u\x00X\x00A=1\x00node\x00--\x00/p/@openai/codex/bin/codex.js\x00-i\x00a.png")
	f.Add("")
	f.Add("npx\x00--no-daemon\x00@openai/codex")
	a := adapters.AdapterOf(Harness{})
	f.Fuzz(func(t *testing.T, joined string) {
		argv := strings.Split(joined, "\x00")
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

func TestResumedSession(t *testing.T) {
	const id = "0b7e3c2a-1f2d-4c5e-8a9b-0c1d2e3f4a5b"
	for _, c := range []struct {
		args   []string
		id     string
		resume bool
	}{
		{[]string{"exec", "--skip-git-repo-check", "resume", "--last", "hi"}, "", true},
		{[]string{"exec", "resume", id, "hi"}, id, true},
		{[]string{"-m", "gpt", "e", "resume", id}, id, true},
		{[]string{"resume", id}, id, true},
		{[]string{"resume", "--last", "--include-non-interactive"}, "", true},
		{[]string{"resume", "--last"}, "", false},
		{[]string{"resume"}, "", false},
		{[]string{"exec", "resume", "--last", "--all", "hi"}, "", false},
		{[]string{"exec", "resume", "my-thread", "hi"}, "", false},
		{[]string{"exec", "hi"}, "", false},
		{[]string{"fork", id}, "", false},
		{[]string{"hello"}, "", false},
	} {
		got, ok := Harness{}.ResumedSession(append([]string{"codex"}, c.args...), 1)
		if got != c.id || ok != c.resume {
			t.Errorf("%v: %q %v, want %q %v", c.args, got, ok, c.id, c.resume)
		}
	}
}
