package opencode

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// OpenCode has no command hooks; its plugins (JavaScript modules run in
// its own process) get every event of its bus. A plugin named in
// OPENCODE_CONFIG_CONTENT's "plugin" list as a file:// URL loads for one
// launch, with no file in the user's folders (measured with 1.18.33). The
// hook bridge is such a plugin (OpenCode's glue, bridge.js, after the
// kit's bridge runtime), written once per lifeloop program into the state
// folder's bridges/ (0600 in 0700); `lifeloop run` adds it to the
// launch's environment (BridgeEnv), merged into the user's own
// OPENCODE_CONFIG_CONTENT. It reports each top-level session
// the process creates, and each top-level turn with the database's frame
// id (the user message that opens it):
//
//	session  session.started  a session without a parent created (the
//	                          TUI's first prompt, or its first prompt
//	                          after it started a new session)
//	prompt   frame.opening    first part of a user message, no turn open
//	reply    frame.opened     first answer of the turn
//	end      frame.ending,    the turn's last answer completed, or
//	         frame.ended      session.idle with the turn still open
//	compacted context.compacted the compaction's summary completed (or
//	                          session.compacted, when that update was
//	                          missed), under the id of the compaction
//	                          request (the user message with the
//	                          compaction part); trigger auto|manual
//	attention (none)          a bus event the attention reader maps
//	                          (permission.*, question.*, session.error,
//	                          session.status retry: busy and idle say
//	                          what the turn's reports say), {type, properties}
//	                          trimmed to the fields it reads: the
//	                          wrapper's attention tracker reads it
//	                          (AttentionEvent), no receipt
//
// A session.started naming another session while the first runs is a
// switch inside one process (stream keeper: two harness sessions). The
// database stays the source of usage (pressure): the plugin's frames and
// compactions win over the rows' (stream keeper: native wins), and the
// database's compaction, the same one under the same id, gives the
// receipt its figures (pre_tokens, window, model).

//go:embed bridge.js
var bridgeSource string

// Hook names the plugin reports under.
const (
	hookSession   = "session"
	hookPrompt    = "prompt"
	hookReply     = "reply"
	hookEnd       = "end"
	hookCompacted = "compacted"
	hookAttention = "attention"
)

// Hooks implements adapters.NativeHooks: the plugin's reports, mapped by
// mapBridge (none is a settings-file hook).
func (Harness) Hooks() *hooks.Spec {
	c := hooks.Custom{Map: mapBridge}
	return &hooks.Spec{
		Adapter: "opencode",
		Custom: map[string]hooks.Custom{
			hookSession: c, hookPrompt: c, hookReply: c, hookEnd: c, hookCompacted: c,
			hookAttention: {Map: mapAttention},
		},
	}
}

// attentionInput is the part of an attention report mapAttention checks.
type attentionInput struct {
	Type       string `json:"type"`
	Properties struct {
		SessionID string `json:"sessionID"`
	} `json:"properties"`
}

// mapAttention checks an attention report (a bus event, trimmed): no
// moment, the wrapper's attention tracker reads the event itself.
func mapAttention(m hooks.Mapped, data []byte) (hooks.Mapped, error) {
	var in attentionInput
	if err := json.Unmarshal(data, &in); err != nil {
		return m, fmt.Errorf("%w: %w", hooks.ErrInvalidInput, err)
	}
	if in.Type == "" {
		return m, fmt.Errorf("%w: an attention report without its event type", hooks.ErrInvalidInput)
	}
	m.HarnessSessionID = in.Properties.SessionID
	return m, nil
}

// bridgeInput is one report of the plugin.
type bridgeInput struct {
	SessionID  string `json:"session_id"`
	TurnID     string `json:"turn_id"`
	Cwd        string `json:"cwd"`
	Hook       string `json:"hook_event_name"`
	Trigger    string `json:"trigger"`
	StopReason string `json:"stop_reason"`
}

// mapBridge maps a plugin report to its moments.
func mapBridge(m hooks.Mapped, data []byte) (hooks.Mapped, error) {
	var in bridgeInput
	if err := json.Unmarshal(data, &in); err != nil {
		return m, fmt.Errorf("%w: %w", hooks.ErrInvalidInput, err)
	}
	if in.Hook != "" && in.Hook != m.Hook {
		return m, fmt.Errorf("%w: hook_event_name %q does not match --hook %q", hooks.ErrInvalidInput, in.Hook, m.Hook)
	}
	if in.SessionID == "" {
		return m, fmt.Errorf("%w: a report without session_id", hooks.ErrInvalidInput)
	}
	m.HarnessSessionID, m.Cwd = in.SessionID, in.Cwd
	switch m.Hook {
	case hookSession, hookCompacted:
		s := map[string]any{"hook": m.Hook}
		if in.Trigger != "" {
			s["trigger"] = in.Trigger
		}
		if m.Hook == hookSession {
			m.Moments = append(m.Moments, hooks.MappedMoment{Event: contract.EventSessionStarted, Summary: s})
			return m, nil
		}
		// The compaction's id is its request's; none when the plugin did
		// not see the request (the report then stands alone).
		m.Moments = append(m.Moments, hooks.MappedMoment{Event: contract.EventContextCompacted, Summary: s, EventID: hooks.EventID(in.TurnID, contract.EventContextCompacted)})
		return m, nil
	}
	if in.TurnID == "" {
		return m, fmt.Errorf("%w: a report without turn_id", hooks.ErrInvalidInput)
	}
	m.TurnID = in.TurnID
	fc := &contract.FrameContext{FrameID: in.TurnID, FrameClass: contract.FrameTopLevel}
	moment := func(ev contract.Event) hooks.MappedMoment {
		s := map[string]any{"hook": m.Hook}
		if in.Trigger != "" {
			s["trigger"] = in.Trigger
		}
		if in.StopReason != "" && (ev == contract.EventFrameEnding || ev == contract.EventFrameEnded) {
			s["stop_reason"] = in.StopReason
		}
		return hooks.MappedMoment{Event: ev, Frame: fc, Summary: s, EventID: hooks.EventID(in.TurnID, ev)}
	}
	switch m.Hook {
	case hookPrompt:
		m.Moments = append(m.Moments, moment(contract.EventFrameOpening))
	case hookReply:
		m.Moments = append(m.Moments, moment(contract.EventFrameOpened))
	case hookEnd:
		m.Moments = append(m.Moments, moment(contract.EventFrameEnding), moment(contract.EventFrameEnded))
	}
	return m, nil
}

// bridgedEvents are the moments the plugin reports natively and the
// database reports too: the frames and the compaction.
var bridgedEvents = []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventContextCompacted}

// BridgedFrameEvents implements adapters.HookBridge.
func (Harness) BridgedFrameEvents() []contract.Event {
	return append([]contract.Event(nil), bridgedEvents...)
}

// BridgeArgs implements adapters.HookBridge: none, the plugin goes
// through the environment (BridgeEnv).
func (Harness) BridgeArgs(adapters.BridgeTarget) ([]string, error) { return nil, nil }

// BridgeEnv implements adapters.BridgeEnviron: OPENCODE_CONFIG_CONTENT
// with the plugin's file:// URL added to the "plugin" list of the value
// b.Env already has (the user's own configuration, kept as it is).
// Nothing for a command line that starts no session, nor for a one-shot
// `opencode run`: loading any plugin costs OpenCode up to 10 % of such a
// run (docs/harnesses.md), and the database reports every moment the
// plugin would (its frames, its compaction, the session), which the
// wrapper reads to its end when OpenCode exits. The bridge is unavailable
// when the user's value is not a JSON object (OpenCode's own parser would
// have to guess its meaning, so lifeloop leaves it alone).
func (Harness) BridgeEnv(b adapters.BridgeTarget) ([]string, error) {
	start := adapters.ArgStart(b.Argv)
	if start <= 0 || start > len(b.Argv) || !startsSession(b.Argv[start:]) {
		return nil, nil
	}
	if sub, _ := command(b.Argv[start:]); sub == "run" {
		return nil, nil
	}
	for _, a := range b.Argv[:start] {
		if strings.HasPrefix(a, configVar+"=") {
			// It overrides the environment: the plugin would not load.
			return nil, &adapters.BridgeUnavailable{Reason: "the command line assigns " + configVar + " itself"}
		}
	}
	user := adapters.EnvValue(b.Env, configVar)
	if _, err := mergeConfig(user, nil); err != nil {
		return nil, &adapters.BridgeUnavailable{Reason: err.Error()}
	}
	path, err := writePlugin(b)
	if err != nil {
		return nil, err
	}
	value, err := mergeConfig(user, map[string][]string{"plugin": {(&url.URL{Scheme: "file", Path: path}).String()}})
	if err != nil {
		return nil, err
	}
	return []string{configVar + "=" + value}, nil
}

// PluginSource returns the plugin: the kit's bridge runtime
// (kit.BridgeModule), running hookCommand (the lifeloop program and any
// leading arguments) when the control socket does not answer, then
// bridge.js.
func PluginSource(hookCommand []string) []byte {
	return kit.BridgeModule("opencode", hookCommand, bridgeSource)
}

// writePlugin writes the plugin where b keeps bridge files (the shared
// folder, named by its content, else the session folder) and returns
// its path.
func writePlugin(b adapters.BridgeTarget) (string, error) {
	src := PluginSource(b.HookCommand)
	path := filepath.Join(b.SessionDir, "opencode-lifeloop-bridge.js")
	if b.SharedDir != "" {
		sum := sha256.Sum256(src)
		path = filepath.Join(b.SharedDir, fmt.Sprintf("opencode-lifeloop-bridge-%x.js", sum[:6]))
	}
	if have, err := os.ReadFile(path); err == nil && bytes.Equal(have, src) {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), kit.DirPerm); err != nil {
		return "", fmt.Errorf("opencode hook bridge plugin: %w", err)
	}
	if err := kit.WriteFileAtomic(path, src); err != nil {
		return "", fmt.Errorf("opencode hook bridge plugin: %w", err)
	}
	return path, nil
}

var (
	_ adapters.HookBridge    = Harness{}
	_ adapters.BridgeEnviron = Harness{}
)
