package qwen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/telemetry"
)

// Qwen Code's hooks (measured with 0.24.4 and the mock model; read in
// its package): 22 events in Claude Code's shape — PreToolUse,
// PostToolUse, PostToolUseFailure, PostToolBatch, Notification,
// UserPromptSubmit, UserPromptExpansion, SessionStart, Stop,
// MessageDisplay, SubagentStart, SubagentStop, PreCompact, PostCompact,
// SessionEnd, SessionDelete, PermissionRequest, PermissionDenied,
// StopFailure, TodoCreated, TodoCompleted, InstructionsLoaded —
// configured under "hooks" of a settings file as
// {"Event":[{"matcher":…,"hooks":[{"type":"command","command":…}]}]}
// (also "http", "prompt" types). A command hook runs under bash and reads
// Claude-style snake_case JSON on stdin: session_id, transcript_path
// (the session file), cwd, hook_event_name, timestamp, permission_mode,
// and the event's own fields (prompt and prompt_id
// "<session id>########<n>" on UserPromptSubmit, last_assistant_message
// on Stop, reason on SessionEnd, source on SessionStart, …).
//
// Settings layers: system defaults, system, user (~/.qwen or
// $QWEN_HOME), project (<folder>/.qwen, only in a trusted folder). Each
// layer's hooks run; the system layer's are the system-defaults file's
// and the system file's, concatenated. QWEN_CODE_SYSTEM_DEFAULTS_PATH
// names the system-defaults file (no owner check), so `lifeloop run`
// bridges the hooks for one launch (BridgeEnv): a copy of the person's
// own system-defaults file, if any, with lifeloop's hooks added, in the
// lifeloop session folder. The person's files are never written and
// their hooks keep firing. --bare and --safe-mode turn every hook off,
// so a launch with either gets no bridge.
//
// Installed (moments):
//
//	Stop          frame.ending, frame.ended
//	PreCompact    context.pressure_observed (trigger manual|auto)
//	SessionEnd    session.ending (the TUI only: a one-shot runs none)
//	Notification  attention only, no moment (hooks.RoleAttention): a tool
//	              call waiting for approval, the TUI waiting for input
//	              (attention.go); answered at once with an empty response
//
// PermissionRequest is not installed: a hook that answers it decides the
// dialog for the person. SessionStart is not installed either: the TUI
// runs it as it starts, seconds before it takes keys, so after a
// renewal its session.started came before the renewal's own, which
// carries the payload receipts, and that one was dropped as told
// already (TestRenewQwenTUI, resumed and fresh; the launcher waits for a
// relaunched TUI to take keys before it tells its session.started);
// after /compress it also runs again with source "compact", which the
// hooks' mapping reads as a compaction without the figures the session
// file's record has. The session file names the session at the first
// prompt.
//
// Frame ids: the session file names a turn "<session id>#<uuid of its
// prompt record>" (FrameID), which no hook input carries. Stop runs
// after the turn's records are in the session file, whose path it gives:
// the hook side reads the file with the session file's own parser and
// takes the frame of its latest prompt (stopFrameID), so the hook's
// frame.ending/frame.ended and the file's are one frame (native wins).
// UserPromptSubmit runs before Qwen Code writes the prompt record whose
// uuid names the turn (and again, with an empty prompt and the same
// prompt_id, after each round of tool results), so a frame.opening from
// it could not carry the file's frame id: it is not installed, the turn
// opens from the file (synthesized), and no payload is placed at the
// first prompt's hook.
//
// SessionStart's answer {"hookSpecificOutput":{"additionalContext":…}}
// reaches the model request (measured: in the Anthropic request's
// system[1] text, inside <qwen:session-start-context>), a private channel a
// payload could use instead of --append-system-prompt in argv; lifeloop
// does not place there yet (placement.go: not proven end to end).

// Hooks implements adapters.NativeHooks. Each call returns a new Spec.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "qwen",
		Hooks: []hooks.Hook{
			{Name: "Stop", Role: hooks.RoleTurnStop},
			{Name: "PreCompact", Role: hooks.RolePreCompact},
			{Name: "SessionEnd", Role: hooks.RoleSessionEnd},
			{Name: "Notification", Role: hooks.RoleAttention},
		},
		Ignored: []string{
			"SessionStart", "UserPromptSubmit", "UserPromptExpansion", "PreToolUse", "PostToolUse", "PostToolUseFailure",
			"PostToolBatch", "MessageDisplay", "SubagentStart", "SubagentStop", "PostCompact",
			"SessionDelete", "PermissionRequest", "PermissionDenied", "StopFailure", "TodoCreated",
			"TodoCompleted", "InstructionsLoaded",
		},
		FrameID: stopFrameID,
		Matcher: "*",
	}
}

// bridgedFrameEvents are the frame events the hook bridge reports
// natively: Stop → frame.ending and frame.ended.
var bridgedFrameEvents = []contract.Event{contract.EventFrameEnding, contract.EventFrameEnded}

// BridgedFrameEvents implements adapters.HookBridge.
func (Harness) BridgedFrameEvents() []contract.Event { return slices.Clone(bridgedFrameEvents) }

// stopFrameID is the frame of a Stop call: the latest turn of the
// session file the call names, as the session file's parser names it;
// "" for other calls, or when the file cannot tell. Qwen Code writes
// the turn's last record before it runs Stop (measured); should the
// file lag, the call waits, at most stopWait, until the file ends that
// turn.
func stopFrameID(in hooks.Input) string {
	if in.HookEventName != "Stop" || in.SessionID == "" || filepath.Base(in.TranscriptPath) != in.SessionID+".jsonl" {
		return ""
	}
	deadline := time.Now().Add(stopWait)
	for {
		frame, ended, err := latestTurn(in.TranscriptPath)
		if (err == nil && ended) || time.Now().After(deadline) {
			return frame
		}
		time.Sleep(stopPoll)
	}
}

// stopWait bounds how long a Stop call waits for the session file to
// end the turn (a variable for tests); stopPoll is how often it looks.
var stopWait = hooks.FrameIDWait

const stopPoll = 20 * time.Millisecond

// userType is the type field of a prompt record, as Qwen Code writes it.
var userType = []byte(`"type":"user"`)

// tailWindow is how much of a session file's end latestTurn reads first;
// it reads four times more, up to the whole file, until it holds the
// latest prompt.
const tailWindow = 64 << 10

// latestTurn reads the end of the session file at path with the file's
// parser and returns the frame id of its latest turn ("" for none) and
// whether the file ends it. Only the records from the latest prompt on
// are decoded: the wrapper reads the file at every turn's end.
func latestTurn(path string) (string, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	size := fi.Size()
	for window := int64(tailWindow); ; window *= 4 {
		off := max(0, size-window)
		buf := make([]byte, size-off)
		if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
			return "", false, err
		}
		if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
			buf = buf[:i+1] // a record still being written is left out
		} else {
			buf = nil
		}
		lines := bytes.SplitAfter(buf, []byte("\n"))
		if off > 0 && len(lines) > 0 {
			lines = lines[1:] // it may start mid-record
		}
		for i := len(lines) - 1; i >= 0; i-- {
			if !bytes.Contains(lines[i], userType) {
				continue
			}
			if frame, ended, ok := turnFrom(lines[i:]); ok {
				return frame, ended, nil
			}
		}
		if off == 0 {
			return "", false, nil
		}
	}
}

// turnFrom parses lines with the file's parser and returns the frame id
// of the turn their first line opens and whether they end it; ok is
// false when the first line opens none.
func turnFrom(lines [][]byte) (frame string, ended, ok bool) {
	p := NewParser()
	var obs []telemetry.Observation
	for i, line := range lines {
		obs, _ = p.Parse(obs[:0], line, telemetry.Provenance{})
		for _, o := range obs {
			switch {
			case o.Kind == telemetry.ObsFrameOpening && i == 0:
				frame, ok = o.FrameID, true
			case o.Kind == telemetry.ObsFrameEnded && ok:
				ended = o.FrameID == frame
			}
		}
		if i == 0 && !ok {
			return "", false, false
		}
	}
	return frame, ended, ok
}

// Where Qwen Code finds its system settings (its defaults when no
// variable names them): the system-defaults file is system-defaults.json
// beside the system file unless QWEN_CODE_SYSTEM_DEFAULTS_PATH names
// another.
const (
	systemSettingsVar  = "QWEN_CODE_SYSTEM_SETTINGS_PATH"
	systemDefaultsVar  = "QWEN_CODE_SYSTEM_DEFAULTS_PATH"
	systemSettingsFile = "/etc/qwen-code/settings.json"
	systemDefaultsName = "system-defaults.json"
)

// bridgeFile is the per-launch system-defaults file in the session
// folder.
const bridgeFile = "qwen-system-defaults.json"

// BridgeArgs implements adapters.HookBridge: none, the bridge goes
// through the environment (BridgeEnv).
func (Harness) BridgeArgs(adapters.BridgeTarget) ([]string, error) { return nil, nil }

// BridgeEnv implements adapters.BridgeEnviron:
// QWEN_CODE_SYSTEM_DEFAULTS_PATH naming a file in the session folder
// that holds the person's own system-defaults file (the one the variable
// or the system settings path names; none is fine) with lifeloop's hooks
// added. Nothing for a command line that starts no session or turns the
// hooks off (--bare, --safe-mode); a person's file that cannot be read
// as settings leaves the launch without the bridge (BridgeUnavailable)
// rather than without their settings.
func (h Harness) BridgeEnv(b adapters.BridgeTarget) ([]string, error) {
	start := adapters.ArgStart(b.Argv)
	if start <= 0 || start > len(b.Argv) || !startsSession(b.Argv[start:]) || hooksOff(b.Argv[start:]) {
		return nil, nil
	}
	own := adapters.EnvValue(b.Env, systemDefaultsVar)
	if own == "" {
		system := adapters.EnvValue(b.Env, systemSettingsVar)
		if system == "" {
			system = systemSettingsFile
		}
		own = filepath.Join(filepath.Dir(system), systemDefaultsName)
	}
	base, err := os.ReadFile(own)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// The settings version Qwen Code 0.24.4 writes: without it, it
		// would rewrite the file to add it.
		base = []byte(`{"$version": 4}`)
	case err != nil:
		return nil, &adapters.BridgeUnavailable{Reason: fmt.Sprintf("cannot read Qwen Code's system defaults %s: %v", own, err)}
	}
	merged, err := kit.AddSettingsHooks(base, h.Hooks(), b.HookCommand)
	if err != nil {
		return nil, &adapters.BridgeUnavailable{Reason: fmt.Sprintf("Qwen Code's system defaults %s: %v", own, err)}
	}
	path := filepath.Join(b.SessionDir, bridgeFile)
	if err := kit.WriteFileAtomic(path, merged); err != nil {
		return nil, fmt.Errorf("hook bridge settings: %w", err)
	}
	return []string{systemDefaultsVar + "=" + path}, nil
}

// hooksOff reports whether Qwen Code arguments turn every hook off.
func hooksOff(args []string) bool {
	return slices.ContainsFunc(parseArgs(args), func(ca adapters.Arg) bool {
		return ca.Option == "--bare" || ca.Option == "--safe-mode"
	})
}
