package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// userOpenClawPlugin adds a plugin of the user's own to OpenClaw's
// configuration in env (plugins.load.paths): at each prompt it writes
// marker. It returns the configuration's bytes after the change.
func userOpenClawPlugin(t *testing.T, env *testharness.HarnessEnv, marker string) []byte {
	t.Helper()
	dir := filepath.Join(env.Home, "user-plugin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"package.json":         `{"name":"user-probe","type":"module","openclaw":{"extensions":["./index.mjs"]}}`,
		"openclaw.plugin.json": `{"id":"user-probe","name":"user probe","activation":{"onStartup":true},"configSchema":{"type":"object","additionalProperties":false}}`,
		"index.mjs": fmt.Sprintf(`import { writeFileSync } from "node:fs";
export default { id: "user-probe", name: "user probe", register(api) { api.on("before_prompt_build", () => { writeFileSync(%q, "x"); }); } };
`, marker),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(env.OpenClawStateDir(), "openclaw.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["plugins"] = map[string]any{
		"load":    map[string]any{"paths": []string{dir}},
		"entries": map[string]any{"user-probe": map[string]any{"enabled": true, "hooks": map[string]any{"allowConversationAccess": true}}},
	}
	if data, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRunOpenClawHookBridge: under `lifeloop run`, `openclaw agent
// --local` loads the bridge plugin through lifeloop's configuration file
// (which includes the user's), and the turn's four frame receipts come
// from it (source hook, the database's frame ids, each recorded once). A
// --payload placed at the first prompt and a payload a client returns at
// frame.opening both reach the model prepended to the user's prompt (the
// first message), and their receipts say delivered. The user's own
// configuration still applies: its provider answers, its plugin runs,
// its model window gives the pressure (input 100 000 + cache read 20 000
// + output 7 of 200 000: moderate), and the file is unchanged. The
// payload is not on the recorded command line; lifeloop's files are
// 0600 in its state folder and none lands in OpenClaw's; no process is
// left.
func TestRunOpenClawHookBridge(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ll := lifeloopBin(t)
	const reply = "Bridged answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply, UsageSequence: []mockmodel.Usage{
		{InputTokens: 100000, CacheReadInputTokens: 20000, OutputTokens: 7},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	state := stateDir(t)
	userMarker := filepath.Join(t.TempDir(), "user-plugin-fired")
	userCfg := userOpenClawPlugin(t, env, userMarker)

	const payloadMarker, clientMarker = "LIFELOOP-PAYLOAD-MARKER-openclaw-1", "LIFELOOP-CLIENT-MARKER-openclaw-2"
	pf := payloadFile(t, env.Dir, "pay_cli", payloadMarker)
	client := clientScript(t, env.Dir, clientMarker)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "1s",
		"--payload", pf, "--payload-at", "frame", "--client", client,
		"--", bin, "agent", "--local", "-m", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	convo := mock.RequestsOfKind("claude")
	if len(convo) != 1 {
		t.Fatalf("%d model requests, want 1", len(convo))
	}
	for _, m := range []string{payloadMarker, clientMarker} {
		if path, ok := requestCarries(t, convo[0].Body, m); !ok || !strings.HasPrefix(path, ".messages[0]") {
			t.Errorf("the request carries %s: %v at %q, want in the user's prompt (first message)", m, ok, path)
		}
	}
	if _, ok := requestCarries(t, convo[0].Body, "say hello"); !ok {
		t.Error("the request lost the user's prompt")
	}
	if _, err := os.Stat(userMarker); err != nil {
		t.Errorf("the user's own plugin did not run: %v", err)
	}
	if have, err := os.ReadFile(filepath.Join(env.OpenClawStateDir(), "openclaw.json")); err != nil || string(have) != string(userCfg) {
		t.Errorf("the user's configuration changed (%v):\n%s", err, have)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}

	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "openclaw", "completed", "exit_code_0")
	sid, turns := openClawTurns(t, env)
	if len(turns) != 1 {
		t.Fatalf("turns %v, want one", turns)
	}
	assertFrames(t, rs, turns)
	assertFramesOnce(t, rs)
	assertFramesFromHook(t, rs)
	assertOpenClawBinding(t, env, state, session, rs, sid)
	assertOpenCodePressure(t, rs, []wantPressure{{120007, 200000, "moderate", "low"}})
	assertCausalOrder(t, rs)
	delivered := map[string]string{}
	prs, _ := lastOf(rs, "frame.opening")["payload_receipts"].([]any)
	for _, pr := range prs {
		m := pr.(map[string]any)
		delivered[m["payload_id"].(string)] = m["status"].(string)
	}
	if delivered["pay_cli"] != "delivered" || delivered["pay_client"] != "delivered" {
		t.Errorf("payload receipts on frame.opening: %v", prs)
	}
	if w := lastOf(rs, "session.ended")["warnings"]; w != nil {
		t.Errorf("session.ended warnings: %v", w)
	}

	argv := toJSON(sessionRecord(t, state, session)["argv"])
	for _, s := range []string{"OPENCLAW_CONFIG_PATH", payloadMarker} {
		if strings.Contains(argv, s) {
			t.Errorf("recorded argv %s holds %q", argv, s)
		}
	}
	plugins, _ := filepath.Glob(filepath.Join(state, "bridges", "openclaw-lifeloop-bridge-*", "*"))
	configs, _ := filepath.Glob(filepath.Join(state, "sessions", "*", "openclaw-config.json"))
	if len(plugins) != 3 || len(configs) != 1 {
		t.Fatalf("plugin files %v, configurations %v; want three and one", plugins, configs)
	}
	for _, f := range append(plugins, configs...) {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, st, err)
		}
	}
	for _, f := range filesUnder(t, env.OpenClawStateDir()) {
		if strings.Contains(f, "lifeloop") {
			t.Errorf("lifeloop wrote %s into OpenClaw's state folder", f)
		}
	}
}
