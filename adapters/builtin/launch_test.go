package builtin

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

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
			if strings.Contains(strings.Join(adapters.RedactPlacement(placed), "\x00"), "FUZZ-SECRET") {
				t.Fatalf("adapters.RedactPlacement(%q) kept the body", placed)
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

// TestNoPayloadBodyInArgv runs every adapter's launch placement, as
// lifeloop starts it (PlaceAtLaunch, then ExternalizePlacement with
// files that store the text), over command lines that start a session in
// every mode the harnesses have: no element of the command line that
// would start carries the payload body. A placement whose body would
// stay in argv is refused — with ArgvPlacementError saying so — unless
// the adapter was made WithArgvPayloads, and only then placed (with the
// body still in argv after ExternalizePlacement).
func TestNoPayloadBodyInArgv(t *testing.T) {
	// No harness is on this PATH: an adapter that asks the harness it
	// would start (e.g. for its version) finds none, rather than running
	// whatever the machine has installed (`npx -y` would download it).
	t.Setenv("PATH", t.TempDir())
	const secret = "ARGV-SECRET-9b4e"
	text := `{"payloads":[{"payload_id":"p","payload_kind":"k","body":"` + secret + ` \"q\" \\ é"}]}`
	tails := [][]string{
		{}, {"hi"}, {"-p", "hi"}, {"-i", "hi"}, {"--prompt", "hi"}, {"--prompt-interactive=hi"},
		{"exec", "--skip-git-repo-check", "hi"}, {"e", "hi"}, {"exec", "resume", "abc", "go on"}, {"exec", "resume", "--last"},
		{"resume", "abc"}, {"resume", "--last", "go on"}, {"fork", "abc"}, {"--no-daemon"}, {"-m", "o3", "hi"},
		{"run", "hi"}, {"-s", "ses_1"}, {"-c"}, {"--continue"}, {"--resume", "abc"}, {"--session", "abc", "-p", "hi"},
		{"--append-system-prompt", "mine", "-p", "hi"}, {"--append-system-prompt=mine"}, {"--append-system-prompt-file", "u.txt"},
		{"--mode", "json", "-p", "hi"}, {"-p", "work", "exec", "hi"}, {"--profile", "work"}, {"--", "hi"},
	}
	placers := 0
	for _, a := range Default().All() {
		if _, ok := a.Harness().(adapters.LaunchPlacer); !ok {
			continue
		}
		placers++
		for _, name := range a.Harness().Describe().Names {
			for _, head := range [][]string{{name}, {"npx", "-y", name}, {"A=1", name}} {
				for _, tail := range tails {
					argv := slices.Concat(head, tail)
					t.Run(a.ID+"/"+strings.Join(argv, " "), func(t *testing.T) {
						checkNoBodyInArgv(t, a, argv, text, secret)
						// As run starts it: after PrepareLaunch.
						checkNoBodyInArgv(t, a, a.PrepareLaunch(argv), text, secret)
					})
				}
			}
		}
	}
	// A user's own argument that looks like an envelope is left alone.
	for _, a := range Default().All() {
		names := a.Harness().Describe().Names
		if len(names) == 0 {
			continue
		}
		argv := []string{names[0], "-p", text}
		if out, err := a.ExternalizePlacement(argv, adapters.PlacementFiles{}); err != nil || !slices.Equal(out, argv) {
			t.Errorf("%s: ExternalizePlacement of the user's own %q = %q, %v", a.ID, argv, out, err)
		}
	}
	if placers < 5 {
		t.Errorf("%d adapters with a launch placement; want every harness's", placers)
	}
}

// checkNoBodyInArgv places text on argv as lifeloop does and checks
// that secret is in no element of the command line that would start.
func checkNoBodyInArgv(t *testing.T, a *adapters.Adapter, argv []string, text, secret string) {
	t.Helper()
	var stored []string
	files := adapters.PlacementFiles{
		Env:   []string{"HOME=/home/u", "CODEX_HOME=/home/u/.codex"},
		Write: func(s string) (string, error) { stored = append(stored, s); return "/state/placed.txt", nil },
		WriteIn: func(dir, suffix, s string) (string, error) {
			stored = append(stored, s)
			return dir + "/" + adapters.PlacementFilePrefix + "1" + suffix, nil
		},
	}
	placed, _, ok := a.PlaceAtLaunch(argv, text)
	optIn, _, argvOK := a.WithArgvPayloads().PlaceAtLaunch(argv, text)
	refused := a.ArgvPlacementError(argv, "")
	switch {
	case ok:
		out, err := a.ExternalizePlacement(placed, files)
		if err != nil {
			t.Fatalf("ExternalizePlacement(%q): %v", placed, err)
		}
		for _, s := range out {
			if strings.Contains(s, secret) {
				t.Fatalf("the payload body is in argv: %q", out)
			}
		}
		if !slices.ContainsFunc(stored, func(s string) bool { return strings.Contains(s, secret) }) {
			t.Errorf("placed on %q, but no file holds the body (stored %q)", out, stored)
		}
		if refused != nil {
			t.Errorf("placed, but ArgvPlacementError says %v", refused)
		}
	case argvOK:
		// Only with the opt-in: the body stays in argv.
		if !errors.Is(refused, adapters.ErrPayloadInArgv) {
			t.Errorf("refused without the opt-in, but ArgvPlacementError = %v", refused)
		}
		out, err := a.WithArgvPayloads().ExternalizePlacement(optIn, files)
		if err != nil || !slices.ContainsFunc(out, func(s string) bool { return strings.Contains(s, secret) }) {
			t.Errorf("refused without the opt-in, but with it ExternalizePlacement(%q) = %q, %v: the body left argv", optIn, out, err)
		}
	default:
		if refused != nil {
			t.Errorf("no placement at all, but ArgvPlacementError says %v", refused)
		}
	}
}
