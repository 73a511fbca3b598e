package openclaw

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/titanous/json5"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// OpenClaw's hooks are typed plugin hooks: JavaScript modules run in its
// own process (api.on(name, handler)). `openclaw agent --local` activates
// the plugins of its configuration; `openclaw chat` and `agent exec`
// import them for discovery only, and none of their hooks fire (measured
// with 2026.9.6). The hook bridge is such a plugin (a folder with
// package.json, openclaw.plugin.json and index.mjs: the kit's bridge
// runtime, then OpenClaw's glue, bridge.mjs), written once per lifeloop
// program into the state folder's bridges/ (0600 in 0700). A launch gets
// it through a configuration file of lifeloop's in the session folder
// (0600), named by OPENCLAW_CONFIG_PATH: it $includes the user's
// configuration, when there is one (OPENCLAW_INCLUDE_ROOTS admits its
// folder; OpenClaw merges the wrapper's keys over it, lists appended), and
// adds the plugin's folder to plugins.load.paths with the plugin enabled
// and allowed the conversation hooks. Nothing in the user's files
// changes. The plugin reports, for each user turn:
//
//	before_prompt_build  frame.opening; context lifeloop answers is prepended
//	                     to the prompt (prependContext): pre_frame_leading
//	model_call_started   frame.opened
//	agent_end            frame.ending, frame.ended
//
// with the database's frame ids (kit.FrameID: the session id and the
// turn's number since the launch). The database stays the source of the
// session id, usage (pressure) and compactions: OpenClaw's
// before_compaction/after_compaction carry no more than its compaction
// row, and the plugin's frames win over the rows' (stream keeper: native
// wins).

//go:embed bridge.mjs
var bridgeSource string

// pluginID is the bridge plugin's id in OpenClaw's configuration.
const pluginID = "lifeloop-bridge"

// includeRootsVar admits $include targets outside the configuration's
// folder (a path list).
const includeRootsVar = "OPENCLAW_INCLUDE_ROOTS"

// wrapperConfig is lifeloop's configuration file in the session folder.
const wrapperConfig = "openclaw-config.json"

// Hooks implements adapters.NativeHooks: the plugin's reports.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "openclaw",
		Hooks: []hooks.Hook{
			{Name: "before_prompt_build", Role: hooks.RolePromptSubmit},
			{Name: "model_call_started", Role: hooks.RoleModelRequest},
			{Name: "agent_end", Role: hooks.RoleTurnStop},
		},
	}
}

// bridgedFrameEvents are the frame events the plugin reports natively.
var bridgedFrameEvents = []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded}

// BridgedFrameEvents implements adapters.HookBridge.
func (Harness) BridgedFrameEvents() []contract.Event { return slices.Clone(bridgedFrameEvents) }

// BridgeArgs implements adapters.HookBridge: none, the plugin goes
// through the environment (BridgeEnv).
func (Harness) BridgeArgs(adapters.BridgeTarget) ([]string, error) { return nil, nil }

// BridgeEnv implements adapters.BridgeEnviron: OPENCLAW_CONFIG_PATH naming
// lifeloop's configuration file (which includes the user's) and
// OPENCLAW_INCLUDE_ROOTS with the user's configuration folder added to the
// user's own list. Nothing for a command line other than `agent --local`
// (no other local command runs plugin hooks); the bridge is unavailable
// when the command line chooses other folders (--dev, --profile,
// --container) or assigns OpenClaw's configuration variables itself.
func (Harness) BridgeEnv(b adapters.BridgeTarget) ([]string, error) {
	start := adapters.ArgStart(b.Argv)
	if start <= 0 || start > len(b.Argv) || !isLocalAgent(b.Argv[start:]) {
		return nil, nil
	}
	if global, _, _ := command(b.Argv[start:]); movesFolders(global) {
		return nil, &adapters.BridgeUnavailable{Reason: "the command line chooses OpenClaw's folders (--dev, --profile or --container)"}
	}
	for _, a := range b.Argv[:start] {
		if strings.HasPrefix(a, configPathVar+"=") || strings.HasPrefix(a, includeRootsVar+"=") || strings.HasPrefix(a, stateDirVar+"=") {
			return nil, &adapters.BridgeUnavailable{Reason: "the command line assigns OpenClaw's configuration variables itself"}
		}
	}
	user := ConfigPath(b.Env)
	if user == "" {
		return nil, &adapters.BridgeUnavailable{Reason: "neither OPENCLAW_CONFIG_PATH, OPENCLAW_STATE_DIR nor HOME is set"}
	}
	user, err := filepath.Abs(user)
	if err != nil {
		return nil, &adapters.BridgeUnavailable{Reason: err.Error()}
	}
	dir, err := writePlugin(b)
	if err != nil {
		return nil, err
	}
	include := ""
	if _, err := os.Stat(user); err == nil {
		include = user
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, &adapters.BridgeUnavailable{Reason: "OpenClaw's configuration: " + err.Error()}
	}
	cfg, err := wrapperContent(include, dir, userAllowList(include))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(b.SessionDir, wrapperConfig)
	if err := kit.WriteFileAtomic(path, cfg); err != nil {
		return nil, fmt.Errorf("openclaw hook bridge configuration: %w", err)
	}
	vars := []string{configPathVar + "=" + path}
	if include != "" {
		vars = append(vars, includeRootsVar+"="+includeRoots(adapters.EnvValue(b.Env, includeRootsVar), filepath.Dir(include)))
	}
	return vars, nil
}

// includeRoots returns the path list have with dir (and the folder it
// resolves to, when a link leads there) added unless already present.
func includeRoots(have, dir string) string {
	list := filepath.SplitList(have)
	add := []string{dir}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dir {
		add = append(add, real)
	}
	for _, d := range add {
		if !slices.Contains(list, d) {
			list = append(list, d)
		}
	}
	return strings.Join(slices.DeleteFunc(list, func(s string) bool { return s == "" }), string(filepath.ListSeparator))
}

// wrapperContent is lifeloop's configuration: the user's file included
// ("" for none), the plugin folder loaded, enabled and allowed the
// conversation hooks, and added to plugins.allow when the user's
// configuration keeps an allow list (allow: a plugin not in it does not
// load).
func wrapperContent(include, pluginDir string, allow bool) ([]byte, error) {
	plugins := map[string]any{
		"load":    map[string]any{"paths": []string{pluginDir}},
		"entries": map[string]any{pluginID: map[string]any{"enabled": true, "hooks": map[string]any{"allowConversationAccess": true}}},
	}
	if allow {
		plugins["allow"] = []string{pluginID}
	}
	doc := map[string]any{"plugins": plugins}
	if include != "" {
		doc["$include"] = include
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// userAllowList reports whether the configuration at path (JSON5) has a
// plugins.allow list at its top level.
func userAllowList(path string) bool {
	if path == "" {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 4<<20 {
		return false
	}
	var f struct {
		Plugins struct {
			Allow []any `json:"allow"`
		} `json:"plugins"`
	}
	return json5.Unmarshal(data, &f) == nil && f.Plugins.Allow != nil
}

// PluginSource returns the plugin's module: the kit's bridge runtime
// (kit.BridgeModule), running hookCommand (the lifeloop program and any
// leading arguments) when the control socket does not answer, then
// bridge.mjs.
func PluginSource(hookCommand []string) []byte {
	return kit.BridgeModule("openclaw", hookCommand, bridgeSource)
}

// pluginFiles are the plugin folder's files for hookCommand.
func pluginFiles(hookCommand []string) map[string][]byte {
	return map[string][]byte{
		"index.mjs":            PluginSource(hookCommand),
		"package.json":         []byte(`{"name":"` + pluginID + `","private":true,"type":"module","openclaw":{"extensions":["./index.mjs"]}}` + "\n"),
		"openclaw.plugin.json": []byte(`{"id":"` + pluginID + `","name":"lifeloop bridge","activation":{"onStartup":true},"configSchema":{"type":"object","additionalProperties":false}}` + "\n"),
	}
}

// writePlugin writes the plugin folder where b keeps bridge files (the
// shared folder, named by the module's content, else the session folder)
// and returns its path.
func writePlugin(b adapters.BridgeTarget) (string, error) {
	files := pluginFiles(b.HookCommand)
	dir := filepath.Join(b.SessionDir, "openclaw-lifeloop-bridge")
	if b.SharedDir != "" {
		sum := sha256.Sum256(files["index.mjs"])
		dir = filepath.Join(b.SharedDir, fmt.Sprintf("openclaw-lifeloop-bridge-%x", sum[:6]))
	}
	if err := os.MkdirAll(dir, kit.DirPerm); err != nil {
		return "", fmt.Errorf("openclaw hook bridge plugin: %w", err)
	}
	for _, name := range []string{"package.json", "openclaw.plugin.json", "index.mjs"} {
		path := filepath.Join(dir, name)
		if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, files[name]) {
			continue
		}
		if err := kit.WriteFileAtomic(path, files[name]); err != nil {
			return "", fmt.Errorf("openclaw hook bridge plugin: %w", err)
		}
	}
	return dir, nil
}

var (
	_ adapters.HookBridge    = Harness{}
	_ adapters.BridgeEnviron = Harness{}
)
