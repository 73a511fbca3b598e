package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// frameSources returns the telemetry_summary.source of every frame
// receipt, by "<frame> <event>".
func frameSources(rs []map[string]any) map[string]any {
	out := map[string]any{}
	for _, r := range rs {
		if ev, _ := r["event"].(string); strings.HasPrefix(ev, "frame.") {
			out[frameOfReceipt(r)+" "+ev] = dig(r, "telemetry_summary", "source")
		}
	}
	return out
}

// assertFramesFromHook checks that the plugin (hook) told every frame:
// each frame has a stage from it. A stage the database told instead is
// logged: the database's report waits 5–20 s for the plugin's
// (internal/stream's NativeWindow, NativeWaitMax), and on a machine
// loaded far past its cores the plugin's can come later than that.
func assertFramesFromHook(t *testing.T, rs []map[string]any) {
	t.Helper()
	fromHook := map[string]bool{}
	frames := map[string]bool{}
	for k, src := range frameSources(rs) {
		frame, _, _ := strings.Cut(k, " ")
		frames[frame] = true
		if src == "hook" {
			fromHook[frame] = true
		} else {
			t.Logf("%s from %v, not the plugin (its report came later than the database's wait)", k, src)
		}
	}
	for f := range frames {
		if !fromHook[f] {
			t.Errorf("frame %s: no stage from the plugin (hook)", f)
		}
	}
}

// userInstructions writes the user's own instructions file (marker as
// its text) and returns its path as a JSON string, for the user's
// OPENCODE_CONFIG_CONTENT.
func userInstructions(t *testing.T, env *testharness.HarnessEnv, marker string) string {
	t.Helper()
	path := filepath.Join(env.Dir, "user-instructions.md")
	if err := os.WriteFile(path, []byte(marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(path)
	return string(quoted)
}

// TestRunOpenCodeNoHooks: with --no-hooks no plugin is named, the user's
// OPENCODE_CONFIG_CONTENT reaches OpenCode as it is, and the frames come
// from the database.
func TestRunOpenCodeNoHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	const userMarker = "USER-INSTRUCTION-MARKER-opencode-nohooks"
	env.Setenv("OPENCODE_CONFIG_CONTENT", `{"instructions":[`+userInstructions(t, env, userMarker)+`]}`)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--no-hooks", "--", bin, "run", "say", "hello")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), userMarker); !ok {
		t.Error("the user's instructions did not reach the model")
	}
	_, rs := onlySession(t, state)
	_, turns := openCodeTurns(t, env)
	assertFrames(t, rs, turns)
	for k, src := range frameSources(rs) {
		if src != "database" {
			t.Errorf("%s from %v, want the database", k, src)
		}
	}
	if plugins, _ := filepath.Glob(filepath.Join(state, "bridges", "opencode-*")); len(plugins) != 0 {
		t.Errorf("plugin written with --no-hooks: %v", plugins)
	}
}

// filesUnder lists the files under dir (none when it does not exist).
func filesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}
