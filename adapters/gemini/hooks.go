package gemini

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// Gemini CLI's command hooks (0.61.0) are configured under "hooks" in a
// settings.json (user: $HOME/.gemini, or $GEMINI_CLI_HOME/.gemini;
// project: <folder>/.gemini, run only in a trusted folder) in the same
// {"Event":[{"matcher":…,"hooks":[{"type":"command","command":…}]}]}
// shape lifeloop writes, read their input as JSON on stdin ({session_id,
// transcript_path, cwd, hook_event_name, timestamp} plus the event's own
// fields) and may answer {"hookSpecificOutput":{"additionalContext":…}}.
//
// There is no per-launch settings file (no --settings flag; the
// GEMINI_CLI_SYSTEM_SETTINGS_PATH file must be owned by root), so lifeloop
// has no hook bridge for `lifeloop run`: the hooks are installed with
// `lifeloop host apply` only.
//
// Mapping: SessionStart → session.started, BeforeAgent (after the prompt
// is submitted) → frame.opening, AfterAgent (the turn's answer is final) →
// frame.ending and frame.ended, SessionEnd → session.ending. Notification
// (a tool confirmation dialog is shown) is installed for attention only
// (hooks.RoleAttention): no moment, answered at once with an empty
// response so the dialog shows; under `lifeloop run` host-hook forwards
// it to the wrapper, whose attention tracker reads it (AttentionEvent).
// The other events say nothing about the lifecycle: BeforeModel,
// AfterModel (once per streamed chunk), BeforeToolSelection, BeforeTool,
// AfterTool, and PreCompress, which fires before every model request
// whether or not the history is then compressed.
//
// Frames: no hook input carries a turn id, but BeforeAgent and AfterAgent
// of one turn carry the same prompt, so the frame id is PromptFrameID:
// "<session_id>#<first 12 hex digits of SHA-256(prompt)>". The chat-file
// parser names a turn the same way, so under `lifeloop run` with these
// hooks installed the hooks and the chat file report one frame
// (TestRunGeminiWithHostHooks). A hook cannot count turns: a later turn
// with the same prompt text gets the same id again, and its hook receipts
// are taken for repeats of the first turn's (the chat file names it
// "<id>.2", "<id>.3", …, so under `lifeloop run` it still has its frame).
//
// Measured: in -p mode every hook fires once; in the TUI SessionEnd fires
// up to three times on exit (/quit, Ctrl-C twice, a signal), each a
// session.ending.

// Hooks implements adapters.NativeHooks. Each call returns a new Spec.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "gemini",
		Hooks: []hooks.Hook{
			{Name: "SessionStart", Role: hooks.RoleSessionStart},
			{Name: "BeforeAgent", Role: hooks.RolePromptSubmit},
			{Name: "AfterAgent", Role: hooks.RoleTurnStop},
			{Name: "SessionEnd", Role: hooks.RoleSessionEnd},
			{Name: "Notification", Role: hooks.RoleAttention},
		},
		Ignored: []string{"BeforeModel", "AfterModel", "BeforeToolSelection", "BeforeTool", "AfterTool", "PreCompress"},
		FrameID: frameID,
		Matcher: "*",
	}
}

// frameID is PromptFrameID for the calls that carry the prompt
// (BeforeAgent, AfterAgent), else "".
func frameID(in hooks.Input) string {
	if in.Prompt == nil || in.SessionID == "" {
		return ""
	}
	return PromptFrameID(in.SessionID, *in.Prompt)
}

// PromptFrameID is the frame id of a turn of session sessionID whose
// prompt is prompt (as the hooks see it: the text the user sent, with a
// SessionStart hook's context in front of it in headless mode):
// "<sessionID>#<first 12 hex digits of SHA-256(prompt)>".
func PromptFrameID(sessionID, prompt string) string {
	h := sha256.Sum256([]byte(prompt))
	return sessionID + "#" + hex.EncodeToString(h[:6])
}

// HostSettingsPath implements adapters.HostInstaller: .gemini/settings.json
// of the project folder (--project, default the current folder), or with
// --user the user's settings.json in $GEMINI_CLI_HOME/.gemini, else
// ~/.gemini.
func (Harness) HostSettingsPath(t adapters.HostTarget) (string, error) {
	if t.User && t.Project != "" {
		return "", &adapters.HostTargetError{Msg: "give --project DIR or --user, not both"}
	}
	if t.User {
		home := homeDir(t.Getenv)
		if home == "" {
			return "", errors.New("neither GEMINI_CLI_HOME nor HOME is set; cannot find the user's Gemini CLI settings")
		}
		return filepath.Join(home, "settings.json"), nil
	}
	dir := t.Project
	if dir == "" {
		dir = t.Cwd
	}
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(abs, ".gemini", "settings.json"), nil
}

// HostNotes implements adapters.HostInstaller.
func (Harness) HostNotes() []string {
	return []string{
		"Gemini CLI runs project hooks (<folder>/.gemini/settings.json) only in a trusted folder, and says on stderr that it found them.",
		"Frames are named by the prompt's hash: two turns with the same prompt text in one session share a frame id.",
		"In the interactive TUI, SessionEnd fires up to three times on exit.",
	}
}
