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

// TestRunOpenCodePlugin: under `lifeloop run` the OpenCode TUI loads the
// bridge plugin named in OPENCODE_CONFIG_CONTENT, and the turn's four
// frame receipts come from it (source hook, the database's frame ids,
// each recorded once). The user's own OPENCODE_CONFIG_CONTENT (an
// instructions file) still applies next to the payload placed at launch:
// the mock finds both in the system prompt. Neither the user's
// configuration nor the payload is on the command line lifeloop records;
// the plugin lives in lifeloop's state folder (0600), nothing is written
// into OpenCode's configuration folder, and no process is left. (A
// one-shot `opencode run` loads no plugin: TestRunOpenCodeRun.)
func TestRunOpenCodePlugin(t *testing.T) {
	skipShort(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)

	const userMarker, payloadMarker = "USER-INSTRUCTION-MARKER-opencode", "LIFELOOP-LAUNCH-MARKER-opencode-plugin"
	userFile := userInstructions(t, env, userMarker)
	env.Setenv("OPENCODE_CONFIG_CONTENT", `{
		// the user's own inline configuration
		"instructions": [`+userFile+`],
	}`)
	before := filesUnder(t, env.OpenCodeConfigDir())

	pf := payloadFile(t, env.Dir, "pay_launch", payloadMarker)
	term := startOpenCodeTUI(t, env, state, "--tick", "0", "--payload", pf)
	askOpenCode(t, term, state, "say hello")
	exitOpenCode(t, term)
	if !strings.Contains(term.Output(), "Plain answer.") {
		t.Errorf("the answer never reached the terminal")
	}
	for _, m := range []string{userMarker, payloadMarker} {
		if path, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), m); !ok || !strings.HasPrefix(path, ".system") {
			t.Errorf("%s: in a request %v at %q, want in the system prompt", m, ok, path)
		}
	}
	assertNoProcessLeft(t, env, term.Pid())

	session, rs := onlySession(t, state)
	sid, turns := openCodeTurns(t, env)
	if len(turns) != 1 {
		t.Fatalf("turns %v, want one", turns)
	}
	assertFrames(t, rs, turns)
	assertFramesOnce(t, rs)
	for k, src := range frameSources(rs) {
		if src != "hook" {
			t.Errorf("%s from %v, want the plugin (hook)", k, src)
		}
	}
	if got := dig(lastOf(rs, "frame.ended"), "telemetry_summary", "stop_reason"); got != "stop" {
		t.Errorf("frame.ended stop_reason %v, want stop", got)
	}
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	assertCausalOrder(t, rs)
	prs, _ := lastOf(rs, "session.starting")["payload_receipts"].([]any)
	if len(prs) != 1 || dig(prs[0], "status") != "delivered" {
		t.Errorf("session.starting payload receipts: %v", prs)
	}

	argv := toJSON(sessionRecord(t, state, session)["argv"])
	for _, s := range []string{"OPENCODE_CONFIG_CONTENT", strings.Trim(userFile, `"`), payloadMarker} {
		if strings.Contains(argv, s) {
			t.Errorf("recorded argv %s holds %q", argv, s)
		}
	}
	plugins, _ := filepath.Glob(filepath.Join(state, "bridges", "opencode-lifeloop-bridge-*.js"))
	if len(plugins) != 1 {
		t.Fatalf("plugin files %v, want one", plugins)
	}
	if st, err := os.Stat(plugins[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("plugin file %v %v, want mode 0600", st, err)
	}
	for _, f := range filesUnder(t, env.OpenCodeConfigDir()) {
		if !strings.Contains(strings.Join(before, "\n"), f) && strings.Contains(f, "lifeloop") {
			t.Errorf("lifeloop wrote %s into OpenCode's configuration folder", f)
		}
	}
}

// TestRunOpenCodeTUICompaction: the OpenCode TUI's first turn fills the
// window past OpenCode's threshold; it compacts automatically and runs its
// continue turn. The bridge plugin reports the compaction: one
// context.compacted (source hook) under the compaction request's id, with
// the database's figures and report attached; the rest as
// TestRunOpenCodeCompactionTelemetry, whose one-shot the database alone
// reports.
func TestRunOpenCodeTUICompaction(t *testing.T) {
	skipShort(t)
	env := testharness.NewHarnessEnv(t, startMock(t, compactingMock))
	env.SetOpenCodeLimits(compactingLimits)
	state := stateDir(t)
	term := startOpenCodeTUI(t, env, state)
	typeThenEnter(t, term, "fill the context")
	waitLedger(t, state, "the continue turn's frame.ended", func(rs []map[string]any) bool {
		return len(receiptsFor(rs, "context.compacted")) > 0 && countFrames(rs) >= 2
	})
	exitOpenCode(t, term)
	assertOpenCodeAutoCompaction(t, env, state, "hook")
	assertNoProcessLeft(t, env, term.Pid())
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
