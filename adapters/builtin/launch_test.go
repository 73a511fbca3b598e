package builtin

import (
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
