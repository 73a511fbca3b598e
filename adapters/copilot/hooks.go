package copilot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// Copilot CLI's hooks under `lifeloop run` (measured with 1.0.102 and the
// mock model: TestRunCopilotHooks). Copilot has no flag naming a hooks
// file, but loads a plugin folder named with --plugin-dir for one launch:
// .plugin/plugin.json and hooks/hooks.json. lifeloop writes one into the
// lifeloop session folder; the person's ~/.copilot is never touched, and
// their own hooks keep firing. A hooks file in Claude's shape
// (PascalCase events, {"matcher","hooks":[{"type":"command",...}]}) gets
// Claude-style snake_case input on stdin (session_id, transcript_path,
// source, reason, stop_reason, ...), which hooks.Input reads as it is.
// Copilot reads only a flat {"additionalContext": ...} answer (a
// hookSpecificOutput object is ignored), hence FlatResponse.
//
// Frame ids: the session file's frame is "<session id>#<interactionId>"
// (FrameID), and no hook input carries the interactionId. Stop (Copilot's
// agentStop) runs after the turn's user.message is in the session file,
// whose path it gives (transcript_path): the hook side reads the file's
// latest top-level user.message and takes its interactionId, so the
// hook's frame.ending/frame.ended and the file's frame.ended are one
// frame (native wins). UserPromptSubmit runs before Copilot writes the
// user.message and gives its interactionId to it: a frame.opening from
// it could not carry the file's frame id, so it is not installed; the
// turn opens from the file (synthesized), and a payload cannot be placed
// at the first prompt (--payload-at frame).

// Hooks implements adapters.NativeHooks. Each call returns a new Spec.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "copilot",
		Hooks: []hooks.Hook{
			{Name: "SessionStart", Role: hooks.RoleSessionStart, CommandOnly: true},
			{Name: "Stop", Role: hooks.RoleTurnStop, CommandOnly: true},
			{Name: "SessionEnd", Role: hooks.RoleSessionEnd, CommandOnly: true},
		},
		// Copilot's other hook events map to no lifecycle moment, or
		// (UserPromptSubmit) to one whose frame id cannot be known.
		// PermissionRequest runs for every tool call before the rules
		// decide, also one approved without asking, so it is no sign of a
		// dialog either.
		Ignored: []string{
			"UserPromptSubmit", "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest",
			"Notification", "PreCompact", "SubagentStart", "SubagentStop", "ErrorOccurred",
		},
		FrameID:      hookFrameID,
		Matcher:      "*",
		FlatResponse: true,
	}
}

// hookFrameID is the frame of a Stop call: the turn of the latest
// top-level user.message in the session file the call names; "" for
// other calls, or when the file cannot tell.
func hookFrameID(in hooks.Input) string {
	if in.SessionID == "" || in.TranscriptPath == "" || filepath.Base(in.TranscriptPath) != eventsFile ||
		filepath.Base(filepath.Dir(in.TranscriptPath)) != in.SessionID {
		return ""
	}
	id, err := latestInteraction(in.TranscriptPath)
	if err != nil || id == "" {
		return ""
	}
	return FrameID(in.SessionID, id)
}

// userMessagePrefix starts every user.message line of a session file.
var userMessagePrefix = []byte(`{"type":"user.message"`)

// latestInteraction returns the interactionId of the last user.message
// of the session file at path that is not a subagent's ("" for none).
func latestInteraction(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var last string
	for {
		line, err := r.ReadBytes('\n')
		if bytes.HasPrefix(line, userMessagePrefix) {
			var rec struct {
				AgentID string `json:"agentId"`
				Data    struct {
					InteractionID string `json:"interactionId"`
				} `json:"data"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.AgentID == "" && rec.Data.InteractionID != "" {
				last = rec.Data.InteractionID
			}
		}
		if err != nil {
			return last, nil
		}
	}
}

// bridgedFrameEvents are the frame events the hook bridge reports
// natively: Stop → frame.ending and frame.ended.
var bridgedFrameEvents = []contract.Event{contract.EventFrameEnding, contract.EventFrameEnded}

// BridgedFrameEvents implements adapters.HookBridge.
func (Harness) BridgedFrameEvents() []contract.Event { return slices.Clone(bridgedFrameEvents) }

// pluginFolder is the per-launch plugin folder in the session folder.
const pluginFolder = "copilot-plugin"

// pluginManifest names the plugin to Copilot (.plugin/plugin.json).
const pluginManifest = `{"name": "lifeloop", "description": "lifeloop's lifecycle hooks for this launch", "version": "1.0.0"}` + "\n"

// pluginDirFlag loads a plugin folder for one launch.
const pluginDirFlag = "--plugin-dir"

// BridgeArgs implements adapters.HookBridge: a plugin folder in the
// session folder whose hooks/hooks.json runs lifeloop's hooks, loaded
// with --plugin-dir DIR. Nothing for a command line that starts no
// session.
func (h Harness) BridgeArgs(b adapters.BridgeTarget) ([]string, error) {
	start := adapters.ArgStart(b.Argv)
	if start <= 0 || start > len(b.Argv) || !startsSession(b.Argv[start:]) {
		return nil, nil
	}
	dir := filepath.Join(b.SessionDir, pluginFolder)
	files := map[string][]byte{
		filepath.Join(dir, ".plugin", "plugin.json"): []byte(pluginManifest),
		filepath.Join(dir, "hooks", "hooks.json"):    hooks.SettingsFile(h.Hooks(), b.HookCommand, nil),
	}
	for path, data := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("hook bridge plugin folder: %w", err)
		}
		if err := kit.WriteFileAtomic(path, data); err != nil {
			return nil, fmt.Errorf("hook bridge plugin folder: %w", err)
		}
	}
	return []string{pluginDirFlag, dir}, nil
}
