package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// Codex has two native mechanisms lifeloop uses:
//
//   - hooks.json command hooks (stdin JSON with session_id and turn_id,
//     the frame id), installed by `lifeloop host apply` into
//     $CODEX_HOME/hooks.json. Codex runs them only once trusted, so
//     `lifeloop run` does not install them. PermissionRequest (an
//     approval dialog is about to show) is installed for attention only
//     (hooks.RoleAttention): no moment, answered at once with an empty
//     response so the dialog shows; under `lifeloop run` host-hook
//     forwards it to the wrapper, whose attention tracker reads it.
//   - the notify program (`-c notify=[...]`), called at each turn's end
//     with its JSON as the last argument. `lifeloop run` sets it for one
//     launch (the hook bridge), still calling the user's own notify
//     program when config.toml has one.

// notifyHook is lifeloop's hook name for the notify program's call.
const notifyHook = "notify"

// Hooks implements adapters.NativeHooks.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "codex",
		Hooks: []hooks.Hook{
			{Name: "SessionStart", Role: hooks.RoleSessionStart},
			{Name: "UserPromptSubmit", Role: hooks.RolePromptSubmit},
			{Name: "PreModelRequest", Role: hooks.RoleModelRequest},
			{Name: "PreCompact", Role: hooks.RolePreCompact},
			{Name: "PostCompact", Role: hooks.RolePostCompact},
			{Name: "Stop", Role: hooks.RoleTurnStop},
			{Name: "SubagentStop", Role: hooks.RoleSubagentStop},
			{Name: "SessionEnd", Role: hooks.RoleSessionEnd},
			{Name: "PermissionRequest", Role: hooks.RoleAttention},
		},
		Ignored: []string{"PreToolUse", "PostToolUse"},
		Custom: map[string]hooks.Custom{
			notifyHook: {FromArgv: true, Map: mapNotify, ChainsUser: true},
		},
	}
}

// notifyInput is the notify program's JSON.
type notifyInput struct {
	Type                 string   `json:"type"`
	ThreadID             string   `json:"thread-id"`
	TurnID               string   `json:"turn-id"`
	Cwd                  string   `json:"cwd"`
	Client               string   `json:"client"`
	InputMessages        []string `json:"input-messages"`
	LastAssistantMessage *string  `json:"last-assistant-message"`
}

// mapNotify maps the notify JSON: agent-turn-complete → frame.ended. The
// TUI also calls notify for a hidden title-generation thread, so the call
// is marked OtherThreads for the caller to filter by thread id.
func mapNotify(m hooks.Mapped, data []byte) (hooks.Mapped, error) {
	m.OtherThreads = true
	var n notifyInput
	if err := json.Unmarshal(data, &n); err != nil {
		return m, fmt.Errorf("%w: %w", hooks.ErrInvalidInput, err)
	}
	m.HarnessSessionID, m.Cwd, m.TurnID = n.ThreadID, n.Cwd, n.TurnID
	if n.Type != "agent-turn-complete" {
		// Other notification types carry no lifecycle moment.
		return m, nil
	}
	if n.TurnID == "" {
		return m, fmt.Errorf("%w: agent-turn-complete without turn-id", hooks.ErrInvalidInput)
	}
	s := map[string]any{"hook": notifyHook, "input_messages": len(n.InputMessages)}
	if n.LastAssistantMessage != nil {
		s["last_message_bytes"] = len(*n.LastAssistantMessage)
	}
	if n.Client != "" {
		s["client"] = n.Client
	}
	fc := &contract.FrameContext{FrameID: n.TurnID, FrameClass: contract.FrameTopLevel}
	m.Moments = append(m.Moments, hooks.MappedMoment{Event: contract.EventFrameEnded, Frame: fc, Summary: s, EventID: hooks.EventID(n.TurnID, contract.EventFrameEnded)})
	return m, nil
}

// BridgeArgs implements adapters.HookBridge: `-c notify=[...]` for the
// launch (see NotifyArgs), chaining the user's own notify program from
// config.toml; nil when the command line already sets notify, and for a
// one-shot (`codex exec`) whose user has no notify program. Codex forks
// its whole process to start a notify program (measured with 0.169: a
// one-shot calling `true` took 1.08x the wall time and 1.10x the CPU of
// one calling none), and a one-shot's rollout reports the same turn end.
// With a program of the user's, Codex starts one anyway: lifeloop's
// takes its place and calls it.
func (Harness) BridgeArgs(b adapters.BridgeTarget) ([]string, error) {
	for _, a := range b.Argv {
		if strings.HasPrefix(a, "notify=") || strings.Contains(a, "notify=") && strings.HasPrefix(a, "-c") {
			return nil, nil
		}
	}
	user := userNotify(b.Env)
	if len(user) == 0 && oneShot(b.Argv) {
		return nil, nil
	}
	return NotifyArgs(b.HookCommand, user), nil
}

// oneShot reports whether the Codex command line argv runs `codex exec`.
func oneShot(argv []string) bool {
	start := adapters.ArgStart(argv)
	if start <= 0 || start > len(argv) {
		return false
	}
	sub, _ := subcommand(argv[start:])
	return sub == "exec" || sub == "e"
}

// BridgedFrameEvents implements adapters.HookBridge: notify reports the
// turn's end only.
func (Harness) BridgedFrameEvents() []contract.Event {
	return []contract.Event{contract.EventFrameEnded}
}

// NotifyArgs returns the Codex arguments (`-c notify=[...]`) that make
// every turn completion call `host-hook --adapter codex --hook notify`.
// When the user has a notify program of their own (userNotify), it is
// passed along with hooks.ChainFlag so it still runs.
func NotifyArgs(hookCommand []string, userNotify []string) []string {
	argv := append([]string{}, hookCommand...)
	argv = append(argv, "host-hook", "--adapter", "codex", "--hook", notifyHook)
	if len(userNotify) > 0 {
		chain, _ := json.Marshal(userNotify)
		argv = append(argv, hooks.ChainFlag, string(chain))
	}
	words := make([]string, len(argv))
	for i, w := range argv {
		// A JSON string is a valid TOML basic string.
		words[i] = hooks.JSONString(w)
	}
	return []string{"-c", "notify=[" + strings.Join(words, ",") + "]"}
}

// HostSettingsPath implements adapters.HostInstaller: $CODEX_HOME/hooks.json,
// else ~/.codex/hooks.json. Codex has no project hooks file.
func (Harness) HostSettingsPath(t adapters.HostTarget) (string, error) {
	if t.Project != "" {
		return "", &adapters.HostTargetError{Msg: "codex reads hooks from $CODEX_HOME/hooks.json only; drop --project"}
	}
	home := homeDir(t.Getenv)
	if home == "" {
		return "", errors.New("HOME is not set; cannot find CODEX_HOME")
	}
	return filepath.Join(home, "hooks.json"), nil
}

// HostNotes implements adapters.HostInstaller.
func (Harness) HostNotes() []string {
	return []string{"Codex runs hooks only when they are trusted: run codex with --dangerously-bypass-hook-trust or accept the hooks when codex asks, else they are silently skipped"}
}
