package copilot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

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
// their own hooks keep firing. Installed: SessionStart, Stop and
// SessionEnd. A hooks file in Claude's shape (PascalCase events,
// {"matcher","hooks":[{"type":"command",...}]}) gets Claude-style
// snake_case input on stdin (session_id, transcript_path, source, reason,
// stop_reason, timestamp, ...), which hooks.Input reads as it is. Copilot
// reads only a flat {"additionalContext": ...} answer (a
// hookSpecificOutput object is ignored), hence FlatResponse.
//
// Frame ids: the session file's frame is "<session id>#<interactionId>"
// (FrameID), and no hook input carries the interactionId. Stop (Copilot's
// agentStop) runs after the turn's records, which Copilot writes to the
// session file whose path it gives (transcript_path) a little later: the
// wrapper waits for the call's own agentStop record in the file and takes
// the interactionId of the top-level user.message before it
// (hookFrameID), so the hook's frame.ending/frame.ended and the file's
// frame.ended are one frame (native wins). UserPromptSubmit runs before
// Copilot writes the user.message and gives its interactionId to it: a
// frame.opening from it could not carry the file's frame id, so it is not
// installed; the turn opens from the file (synthesized), and a payload
// cannot be placed at the first prompt (--payload-at frame).

// Hooks implements adapters.NativeHooks. Each call returns a new Spec.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "copilot",
		Hooks: []hooks.Hook{
			{Name: "SessionStart", Role: hooks.RoleSessionStart, CommandOnly: true},
			{Name: "Stop", Role: hooks.RoleTurnStop, CommandOnly: true},
			// A TUI stopped for a renewal runs SessionEnd before its
			// native binary exits, and the renewal waits for the whole
			// process group, so its session.ending comes before the
			// relaunch's session.starting (TestRenewCopilotTUI).
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
// top-level user.message before the call's own agentStop hook.start in
// the session file the call names; "" for other calls, or when the file
// cannot tell.
//
// Copilot appends its records in order but writes them in batches, after
// it has started the hook (measured: the agentStop hook.start reached the
// file about 100 ms after the hook had started; under load the Stop call
// came before the turn's last session.usage_record, and the first turn
// of a new session before the file existed at all). Its hook.start record
// of agentStop carries the call's input, with the call's time in epoch
// milliseconds, so the call waits, at most stopWait, until the file holds
// the hook.start of this very call: then every record of the turn is
// there for the frame and for the usage its frame.ended carries, and an
// older turn's agentStop is never taken for this one (the latest prompt
// before it is this turn's even when the prompt was written late). A
// call without a time waits for any agentStop after the latest prompt.
// At the bound, the latest prompt the file holds is the frame.
func hookFrameID(in hooks.Input) string {
	if in.SessionID == "" || in.TranscriptPath == "" || filepath.Base(in.TranscriptPath) != eventsFile ||
		filepath.Base(filepath.Dir(in.TranscriptPath)) != in.SessionID {
		return ""
	}
	at, timed := callTime(in.Timestamp)
	deadline := time.Now().Add(stopWait)
	for {
		id, stopped, err := latestInteraction(in.TranscriptPath, at, timed)
		if err != nil && time.Now().After(deadline) {
			return ""
		}
		if err == nil && (stopped || time.Now().After(deadline)) {
			if id == "" {
				return ""
			}
			return FrameID(in.SessionID, id)
		}
		time.Sleep(stopPoll)
	}
}

// callTime reads a hook call's time in epoch milliseconds: Copilot gives
// a hooks file in Claude's shape an ISO 8601 string, its own shape a
// number.
func callTime(raw json.RawMessage) (int64, bool) {
	var ms int64
	if json.Unmarshal(raw, &ms) == nil && ms > 0 {
		return ms, true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

// stopWait bounds how long a Stop call waits for the session file to
// catch up with it (about 100 ms measured); stopPoll is how often it
// looks.
const (
	stopWait = hooks.FrameIDWait
	stopPoll = 20 * time.Millisecond
)

// Line starts and marks latestInteraction looks for.
var (
	userMessagePrefix = []byte(`{"type":"user.message"`)
	hookStartPrefix   = []byte(`{"type":"hook.start"`)
	agentStopMark     = []byte(`"hookType":"agentStop"`)
)

// latestInteraction returns the interactionId of the last user.message
// of the session file at path that is not a subagent's ("" for none),
// and whether an agentStop hook.start follows it. With timed, only the
// hook.start of the call at ms counts, and the prompt is the last before
// it.
func latestInteraction(path string, ms int64, timed bool) (string, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var last string
	stopped := false
	for {
		line, err := r.ReadBytes('\n')
		switch {
		case bytes.HasPrefix(line, userMessagePrefix):
			var rec struct {
				AgentID string `json:"agentId"`
				Data    struct {
					InteractionID string `json:"interactionId"`
				} `json:"data"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.AgentID == "" && rec.Data.InteractionID != "" {
				last, stopped = rec.Data.InteractionID, false
			}
		case bytes.HasPrefix(line, hookStartPrefix) && bytes.Contains(line, agentStopMark) && bytes.HasSuffix(line, []byte("\n")):
			if !timed {
				stopped = last != ""
				break
			}
			var rec struct {
				Data struct {
					Input struct {
						Timestamp int64 `json:"timestamp"`
					} `json:"input"`
				} `json:"data"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Data.Input.Timestamp == ms {
				return last, last != "", nil
			}
		}
		if err != nil {
			return last, stopped, nil
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
// with --plugin-dir DIR, for a one-shot (-p) and the TUI alike (a
// renewal's relaunch gets it again). Nothing for a command line that
// starts no session.
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
