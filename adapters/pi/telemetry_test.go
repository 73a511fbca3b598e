package pi

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// The files in testdata were written by the real Pi 0.73.1 against the
// loopback mock (paths rewritten to /home/dev; in pi-compact-session.jsonl
// the texts of the two big prompts were cut to 120 characters):
//
//	pi-plain-turn.jsonl               pi -p "say hi"
//	pi-tool-turn.jsonl                pi -p "RUN_TOOL please": a bash tool call, its result, the answer
//	pi-injected-custom-message.jsonl  an extension's before_agent_start added a custom_message
//	pi-compact-session.jsonl          three prompts (-p, -p -c, the TUI with -c): the third reply's
//	                                  190 540 tokens made Pi compact; later a manual /compact
//
// pi-1.6-plain-turn.jsonl was written the same way by Pi 1.6.0
// (@earendil-works/pi-coding-agent; paths rewritten likewise): pi -p
// "say hi". It adds a system-role message before the user's and usage
// fields 0.73.1 lacks, which the parser passes over.

const sid = "01a208ab-7b36-7286-bc59-7242f22875e8"

func readLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

var mockWindows = windows{"mock/mock-model": 200000}

func TestParserRealFiles(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"pi-plain-turn.jsonl", []string{
			"harness_session id=01a208a6-a864-76a5-a23c-aa13f321bfad cwd=/home/dev/project",
			"frame_opening frame=01a208a6-a864-76a5-a23c-aa13f321bfad#1 window=200000",
			"frame_opened frame=01a208a6-a864-76a5-a23c-aa13f321bfad#1 window=200000",
			"usage frame=01a208a6-a864-76a5-a23c-aa13f321bfad#1 tokens=17 window=200000",
			"frame_ended frame=01a208a6-a864-76a5-a23c-aa13f321bfad#1 trigger=stop",
		}},
		{"pi-1.6-plain-turn.jsonl", []string{
			"harness_session id=01a21da5-e30a-71da-acce-a9c4891a74d7 cwd=/home/dev/project",
			"frame_opening frame=01a21da5-e30a-71da-acce-a9c4891a74d7#1 window=200000",
			"frame_opened frame=01a21da5-e30a-71da-acce-a9c4891a74d7#1 window=200000",
			"usage frame=01a21da5-e30a-71da-acce-a9c4891a74d7#1 tokens=17 window=200000",
			"frame_ended frame=01a21da5-e30a-71da-acce-a9c4891a74d7#1 trigger=stop",
		}},
		{"pi-tool-turn.jsonl", []string{
			"harness_session id=01a208a9-c599-717b-8fba-30cdc3f45892 cwd=/home/dev/project",
			"frame_opening frame=01a208a9-c599-717b-8fba-30cdc3f45892#1 window=200000",
			"frame_opened frame=01a208a9-c599-717b-8fba-30cdc3f45892#1 window=200000",
			"usage frame=01a208a9-c599-717b-8fba-30cdc3f45892#1 tokens=17 window=200000",
			"usage frame=01a208a9-c599-717b-8fba-30cdc3f45892#1 tokens=17 window=200000",
			"frame_ended frame=01a208a9-c599-717b-8fba-30cdc3f45892#1 trigger=stop",
		}},
		{"pi-injected-custom-message.jsonl", []string{
			"harness_session id=01a208a7-9b10-73fd-af9c-938e0cd30690 cwd=/home/dev/project",
			"frame_opening frame=01a208a7-9b10-73fd-af9c-938e0cd30690#1 window=200000",
			"frame_opened frame=01a208a7-9b10-73fd-af9c-938e0cd30690#1 window=200000",
			"usage frame=01a208a7-9b10-73fd-af9c-938e0cd30690#1 tokens=17 window=200000",
			"frame_ended frame=01a208a7-9b10-73fd-af9c-938e0cd30690#1 trigger=stop",
		}},
		{"pi-compact-session.jsonl", []string{
			"harness_session id=" + sid + " cwd=/home/dev/project",
			"frame_opening frame=" + sid + "#1 window=200000",
			"frame_opened frame=" + sid + "#1 window=200000",
			"usage frame=" + sid + "#1 tokens=26030 window=200000",
			"frame_ended frame=" + sid + "#1 trigger=stop",
			"frame_opening frame=" + sid + "#2 window=200000",
			"frame_opened frame=" + sid + "#2 window=200000",
			"usage frame=" + sid + "#2 tokens=50540 window=200000",
			"frame_ended frame=" + sid + "#2 trigger=stop",
			"frame_opening frame=" + sid + "#3 window=200000",
			"frame_opened frame=" + sid + "#3 window=200000",
			"usage frame=" + sid + "#3 tokens=190540 window=200000",
			"frame_ended frame=" + sid + "#3 trigger=stop",
			"compacted window=200000 trigger=harness pre=190540 post=0",
			"frame_opening frame=" + sid + "#4 window=200000",
			"frame_opened frame=" + sid + "#4 window=200000",
			"usage frame=" + sid + "#4 tokens=17 window=200000",
			"frame_ended frame=" + sid + "#4 trigger=stop",
			"compacted window=200000 trigger=harness pre=17 post=0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, errs := telemetrytest.ParseAll(t, newParser(mockWindows), readLines(t, tt.file))
			if errs != 0 {
				t.Errorf("%d lines rejected", errs)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestParserWindowUnknown: a model models.json does not list (one of Pi's
// built-in models) gives usage without a window: no pressure levels.
func TestParserWindowUnknown(t *testing.T) {
	got, _ := telemetrytest.ParseAll(t, newParser(windows{}), readLines(t, "pi-plain-turn.jsonl"))
	if got[3] != "usage frame=01a208a6-a864-76a5-a23c-aa13f321bfad#1 tokens=17" {
		t.Errorf("usage %q, want no window", got[3])
	}
}

// TestParserTurnEdges covers records the real runs above did not produce,
// written in the shape Pi's docs and dist/core/session-manager give them: a
// failed call (stopReason error, zero usage) answered by a retry, a
// steering message after a tool result, an aborted turn, a failed turn
// whose next prompt opens a new frame, usage without totalTokens, a
// compaction made by an extension.
func TestParserTurnEdges(t *testing.T) {
	msg := func(role, extra string) string {
		return `{"type":"message","id":"x","parentId":"y","timestamp":"2026-11-23T13:00:00.000Z","message":{"role":"` + role + `"` + extra + `}}`
	}
	asst := func(stop string, usage string) string {
		return msg("assistant", `,"provider":"mock","model":"mock-model","stopReason":"`+stop+`","usage":`+usage)
	}
	zero := `{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0}`
	lines := []string{
		`{"type":"session","version":3,"id":"s","timestamp":"2026-11-23T13:00:00.000Z","cwd":"/p"}`,
		msg("user", ""),
		asst("error", zero),
		asst("toolUse", `{"input":100,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":105}`),
		msg("toolResult", ""),
		msg("user", ""), // steering
		asst("aborted", `{"input":120,"output":1,"cacheRead":0,"cacheWrite":0}`),
		msg("user", ""),
		asst("error", zero),
		msg("user", ""),
		asst("length", `{"input":1,"output":2,"cacheRead":3,"cacheWrite":4,"totalTokens":10}`),
		`{"type":"compaction","id":"c","parentId":"x","timestamp":"2026-11-23T13:00:01.000Z","summary":"s","firstKeptEntryId":"x","tokensBefore":10,"fromHook":true}`,
		`{"type":"compaction","id":"d"}`,
		`not json`,
		`{"no":"type"}`,
	}
	got, errs := telemetrytest.ParseAll(t, newParser(mockWindows), lines)
	want := []string{
		"harness_session id=s cwd=/p",
		"frame_opening frame=s#1",
		"frame_opened frame=s#1 window=200000",
		"api_error frame=s#1",
		"usage frame=s#1 tokens=105 window=200000",
		"user_message frame=s#1",
		"usage frame=s#1 tokens=121 window=200000",
		"frame_ended frame=s#1 trigger=aborted",
		"frame_opening frame=s#3 window=200000",
		"frame_opened frame=s#3 window=200000",
		"api_error frame=s#3",
		"frame_ended frame=s#3 trigger=error",
		"frame_opening frame=s#4 window=200000",
		"frame_opened frame=s#4 window=200000",
		"usage frame=s#4 tokens=10 window=200000",
		"frame_ended frame=s#4 trigger=length",
		"compacted window=200000 trigger=extension pre=10 post=0",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs != 3 {
		t.Errorf("%d lines rejected, want 3 (compaction without tokensBefore, not JSON, no type)", errs)
	}
}

func TestSessionDirName(t *testing.T) {
	for cwd, want := range map[string]string{
		"/home/dev/project":   "--home-dev-project--",
		"/tmp/a-b":            "--tmp-a-b--",
		"/tmp/a/b":            "--tmp-a-b--",
		`/c:\x`:               "--c--x--",
		"/tmp/h-pi/project.1": "--tmp-h-pi-project.1--",
	} {
		if got := SessionDirName(cwd); got != want {
			t.Errorf("SessionDirName(%q) = %q, want %q", cwd, got, want)
		}
	}
}

func writeSession(t *testing.T, path, id, cwd string) {
	t.Helper()
	telemetrytest.WriteFile(t, path, `{"type":"session","version":3,"id":"`+id+`","timestamp":"2026-11-23T13:00:00.000Z","cwd":"`+cwd+`"}`+"\n")
}

func TestDiscoverer(t *testing.T) {
	home := t.TempDir()
	cwd := t.TempDir()
	agent := filepath.Join(home, ".pi", "agent")
	dir := filepath.Join(agent, "sessions", SessionDirName(cwd))
	old := filepath.Join(dir, "old_a.jsonl")
	writeSession(t, old, "a", cwd)
	time.Sleep(30 * time.Millisecond)
	launch := telemetrytest.LaunchAfter(t)
	mine := filepath.Join(dir, "new_b.jsonl")
	writeSession(t, mine, "b", cwd)
	other := filepath.Join(dir, "new_c.jsonl") // same folder, other cwd (the lossy name)
	writeSession(t, other, "c", cwd+"/elsewhere")
	partial := filepath.Join(dir, "new_d.jsonl")
	telemetrytest.WriteFile(t, partial, `{"type":"session","id":"d"`)

	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + home}, Cwd: cwd, LaunchedAt: launch})
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != telemetry.SourceTranscript {
		t.Errorf("kind %s", src.Kind)
	}
	src.Discoverer.(*discoverer).Slack = time.Millisecond // the default 2 s would take old_a too
	cands, err := src.Discoverer.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	if got := telemetrytest.CandPaths(cands); !slices.Equal(got, []string{"new_b.jsonl"}) || cands[0].SessionID != "b" {
		t.Errorf("candidates %v", got)
	}
	if roots := src.Discoverer.Roots(); !slices.Contains(roots, dir) {
		t.Errorf("roots %v, want %s", roots, dir)
	}

	// A known session id finds its file whenever it was born.
	d := &discoverer{AgentDir: agent, Cwd: cwd, Launch: time.Now().Add(time.Hour), SessionID: "a"}
	if cands, _ := d.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{"old_a.jsonl"}) {
		t.Errorf("by id: %v", telemetrytest.CandPaths(cands))
	}
	// PI_CODING_AGENT_DIR and PI_CODING_AGENT_SESSION_DIR.
	flat := t.TempDir()
	writeSession(t, filepath.Join(flat, "x_e.jsonl"), "e", cwd)
	src, _ = Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"PI_CODING_AGENT_DIR=" + agent, "PI_CODING_AGENT_SESSION_DIR=" + flat}, Cwd: cwd, LaunchedAt: launch})
	if cands, _ := src.Discoverer.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{"x_e.jsonl"}) {
		t.Errorf("session dir: %v", telemetrytest.CandPaths(cands))
	}
	// Under `lifeloop run` with the bridge extension (which leaves the
	// pointer empty at launch), the file it names and nothing before it
	// has named one.
	ses := t.TempDir()
	if _, err := (Harness{}).BridgeArgs(adapters.BridgeTarget{Argv: []string{"pi", "-p", "hi"}, SessionDir: ses, SharedDir: t.TempDir(), HookCommand: []string{"/bin/lifeloop"}}); err != nil {
		t.Fatal(err)
	}
	src, _ = Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + home, "LIFELOOP_SESSION_DIR=" + ses}, Cwd: cwd, LaunchedAt: launch})
	if cands, _ := src.Discoverer.Candidates(); len(cands) != 0 {
		t.Errorf("before the pointer: %v", telemetrytest.CandPaths(cands))
	}
	telemetrytest.WriteFile(t, filepath.Join(ses, sessionPointer), other)
	if cands, _ := src.Discoverer.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{"new_c.jsonl"}) || cands[0].SessionID != "c" {
		t.Errorf("pointed: %v", telemetrytest.CandPaths(cands))
	}
	if roots := src.Discoverer.Roots(); !slices.Equal(roots, []string{dir}) {
		t.Errorf("pointed roots %v", roots)
	}
	telemetrytest.WriteFile(t, filepath.Join(ses, sessionPointer), filepath.Join(dir, "not-yet.jsonl"))
	if cands, _ := src.Discoverer.Candidates(); len(cands) != 0 {
		t.Errorf("pointed at a file not written yet: %v", telemetrytest.CandPaths(cands))
	}
	// Without the extension (--no-hooks) the pointer is not consulted.
	src, _ = Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + home, "LIFELOOP_SESSION_DIR=" + t.TempDir()}, Cwd: cwd, LaunchedAt: launch})
	src.Discoverer.(*discoverer).Slack = time.Millisecond
	if cands, _ := src.Discoverer.Candidates(); !slices.Equal(telemetrytest.CandPaths(cands), []string{"new_b.jsonl"}) {
		t.Errorf("no bridge: %v", telemetrytest.CandPaths(cands))
	}
	if _, err := (Harness{}).TelemetrySource(adapters.TelemetryTarget{Cwd: cwd}); err == nil {
		t.Error("no HOME: want an error")
	}
}

func TestReadWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "models.json")
	telemetrytest.WriteFile(t, path, `{"providers":{"p":{"models":[{"id":"big","contextWindow":1000000},{"id":"plain"}]},"q":{"baseUrl":"x"}}}`)
	w := readWindows(path)
	if w["p/big"] != 1000000 || w["p/plain"] != defaultWindow || len(w) != 2 {
		t.Errorf("windows %v", w)
	}
	if w := readWindows(filepath.Join(t.TempDir(), "none.json")); len(w) != 0 {
		t.Errorf("missing file: %v", w)
	}
}

// FuzzParser feeds arbitrary lines after a real session's: the parser
// never panics and observations stay in the frames it opened.
func FuzzParser(f *testing.F) {
	for _, name := range []string{"pi-tool-turn.jsonl", "pi-compact-session.jsonl"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		p := newParser(mockWindows)
		var obs []telemetry.Observation
		for _, l := range append(readLines(t, "pi-plain-turn.jsonl"), line, line) {
			obs, _ = p.Parse(obs, []byte(l), telemetry.Provenance{Path: "f.jsonl"})
		}
		for _, o := range obs {
			if o.Kind == telemetry.ObsUsage && (o.Tokens <= 0 || o.Window != 200000 && o.Window != 0) {
				t.Errorf("usage %+v", o)
			}
		}
	})
}
