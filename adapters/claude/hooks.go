package claude

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// Claude Code's command hooks (2.1.197; 2.1.332 adds SessionStart source
// "fork", a forked conversation's own new session) read their input as
// JSON on stdin.
// prompt_id is on UserPromptSubmit and on every later hook of the same
// prompt (Stop, SessionEnd), so it is the frame id. Settings files merge:
// a --settings file adds its hooks to the user's own, which keep firing.

// Hooks implements adapters.NativeHooks. Each call returns a new Spec.
func (Harness) Hooks() *hooks.Spec {
	return &hooks.Spec{
		Adapter: "claude",
		Hooks: []hooks.Hook{
			{Name: "SessionStart", Role: hooks.RoleSessionStart, CommandOnly: true},
			{Name: "UserPromptSubmit", Role: hooks.RolePromptSubmit},
			{Name: "PreCompact", Role: hooks.RolePreCompact},
			{Name: "Stop", Role: hooks.RoleTurnStop},
			{Name: "SubagentStop", Role: hooks.RoleSubagentStop},
			{Name: "SessionEnd", Role: hooks.RoleSessionEnd},
		},
		// Every other hook of 2.1.332 maps to no lifecycle moment: tool
		// calls, permissions, notifications, tasks, teammates, worktrees,
		// files and folders, configuration, elicitation, skills, and the
		// model switch (2.1.331: PreModelSwitch/PostModelSwitch; the next
		// reply's usage carries the new model to telemetry). PostCompact
		// adds nothing to PreCompact and SessionStart source compact.
		Ignored: []string{
			"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
			"UserPromptExpansion", "StopFailure", "SubagentStart", "PostCompact", "PreModelSwitch",
			"PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle",
			"TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange",
			"WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged",
			"DirectoryAdded", "MessageDisplay", "PreSkillShellCommand",
		},
		FrameID: frameID,
		Matcher: "*",
	}
}

// frameID is the hook call's prompt_id, else its turn_id.
func frameID(in hooks.Input) string {
	if in.PromptID != "" {
		return in.PromptID
	}
	return in.TurnID
}

// bridgedFrameEvents are the frame events the hook bridge reports
// natively: UserPromptSubmit → frame.opening, Stop → frame.ending and
// frame.ended.
var bridgedFrameEvents = []contract.Event{contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded}

// BridgedFrameEvents implements adapters.HookBridge.
func (Harness) BridgedFrameEvents() []contract.Event { return slices.Clone(bridgedFrameEvents) }

// bridgeFile is the per-launch settings file in the session folder.
const bridgeFile = "claude-hooks.json"

// BridgeArgs implements adapters.HookBridge: a settings file with
// lifeloop's hooks in the session folder, loaded with --settings FILE.
// Nothing when the command line already passes --settings (Claude reads
// one such file). A Claude that posts hooks over HTTP (httpHooks) posts
// them to the wrapper's door, except SessionStart, which Claude runs only
// as a program: one process per session instead of one per hook call.
func (h Harness) BridgeArgs(b adapters.BridgeTarget) ([]string, error) {
	if slices.ContainsFunc(b.Argv, func(a string) bool { return a == settingsFlag || strings.HasPrefix(a, settingsFlag+"=") }) {
		return nil, nil
	}
	var door *hooks.HTTPTarget
	if b.HookHTTP != nil && h.httpHooks(b) {
		if t, err := b.HookHTTP(); err == nil {
			door = &t
		}
	}
	spec, _ := h.LaunchHooks(b)
	path := filepath.Join(b.SessionDir, bridgeFile)
	if err := kit.WriteFileAtomic(path, hooks.SettingsFile(spec, b.HookCommand, door)); err != nil {
		return nil, fmt.Errorf("hook bridge settings: %w", err)
	}
	return []string{settingsFlag, path}, nil
}

// transcriptReported are the hooks whose moments the transcript of a
// pinned print-mode run reports as well: session.started (its first
// line, the pinned id), frame.opening, frame.ending and frame.ended (the
// prompt and the reply, by their prompt id).
var transcriptReported = []string{"SessionStart", "UserPromptSubmit", "Stop"}

// LaunchHooks implements adapters.HookChooser. A print-mode run (-p)
// that lifeloop pins and follows, where no hook has anything to place,
// gets only the hooks whose moments no transcript line reports
// (SessionEnd: session.ending) or that fire only on occasion (PreCompact,
// SubagentStop): each hook Claude runs costs it time (a one-shot with
// the three others took 1.04x the processor time of one without;
// docs/harnesses.md), and the transcript, read to its end when Claude
// exits, reports the same session and turn. Every other launch gets them
// all.
func (h Harness) LaunchHooks(b adapters.BridgeTarget) (*hooks.Spec, []contract.Event) {
	spec := h.Hooks()
	start := adapters.ArgStart(b.Argv)
	if b.Places || !b.Telemetry || !validStart(b.Argv, start) || !isPrint(parseArgs(b.Argv[start:])) || picksSession(b.Argv) {
		return withAttention(spec), slices.Clone(bridgedFrameEvents)
	}
	spec.Hooks = slices.DeleteFunc(spec.Hooks, func(hk hooks.Hook) bool { return slices.Contains(transcriptReported, hk.Name) })
	return spec, nil
}

// attentionHooks are the hooks a launch that a person may watch installs
// for attention only (hooks.RoleAttention; AttentionEvent reads them): a
// permission dialog, a notification (a dialog, an idle prompt), a turn
// stopped on an API error. A print-mode run that lifeloop follows has no
// person to wait for and goes without them.
var attentionHooks = []string{"PermissionRequest", "Notification", "StopFailure"}

// withAttention moves the attention hooks from spec's Ignored to its
// Hooks.
func withAttention(spec *hooks.Spec) *hooks.Spec {
	spec.Ignored = slices.DeleteFunc(spec.Ignored, func(n string) bool { return slices.Contains(attentionHooks, n) })
	for _, n := range attentionHooks {
		spec.Hooks = append(spec.Hooks, hooks.Hook{Name: n, Role: hooks.RoleAttention})
	}
	return spec
}

// httpHooksSince is the oldest release lifeloop proved posting hooks over
// HTTP ("type": "http"; Claude refuses them for SessionStart and Setup).
const httpHooksSince = oldestProven

// httpHooks reports whether the Claude the launch runs is known, without
// running it (the package.json above its executable), to post hooks over
// HTTP, and would post them to the loopback door directly: an unknown
// version keeps command hooks, and so does an environment whose proxy
// Claude would send the posts through (HTTPS_PROXY or HTTP_PROXY without
// 127.0.0.1 in NO_PROXY).
func (h Harness) httpHooks(b adapters.BridgeTarget) bool {
	v := adapters.PackageVersion(b.Argv, adapters.EnvValue(b.Env, "PATH"), h.Version())
	return v != "" && adapters.CompareVersions(v, httpHooksSince) >= 0 && !proxiesLoopback(b.Env)
}

// proxiesLoopback reports whether Claude would send a post to
// 127.0.0.1 through a proxy (its rule, read in 2.1.197: the first of
// https_proxy, HTTPS_PROXY, http_proxy, HTTP_PROXY, unless no_proxy or
// NO_PROXY is "*" or lists the host, with or without the port).
func proxiesLoopback(env []string) bool {
	proxy := ""
	for _, k := range []string{"https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY"} {
		if proxy = adapters.EnvValue(env, k); proxy != "" {
			break
		}
	}
	if proxy == "" {
		return false
	}
	noProxy := adapters.EnvValue(env, "no_proxy")
	if noProxy == "" {
		noProxy = adapters.EnvValue(env, "NO_PROXY")
	}
	for _, h := range strings.FieldsFunc(noProxy, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if h == "*" || h == "127.0.0.1" {
			return false
		}
	}
	return true
}

// HostSettingsPath implements adapters.HostInstaller: .claude/settings.json
// of the project folder (--project, default the current folder), or with
// --user the user's settings.json in $CLAUDE_CONFIG_DIR, else
// ~/.claude.
func (Harness) HostSettingsPath(t adapters.HostTarget) (string, error) {
	if t.User && t.Project != "" {
		return "", &adapters.HostTargetError{Msg: "give --project DIR or --user, not both"}
	}
	if t.User {
		home, configDir := t.Getenv("HOME"), t.Getenv(configDirVar)
		switch {
		case configDir != "":
			return filepath.Join(configDir, "settings.json"), nil
		case home == "":
			return "", errors.New("HOME is not set; cannot find the user's Claude settings")
		}
		return filepath.Join(home, ".claude", "settings.json"), nil
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
	return filepath.Join(abs, ".claude", "settings.json"), nil
}

// HostNotes implements adapters.HostInstaller: nothing to add.
func (Harness) HostNotes() []string { return nil }
