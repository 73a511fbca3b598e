package gemini

import (
	"slices"
	"strings"
	"syscall"

	"github.com/lifeloop/lifeloop/contract"
)

// A launch's command line (measured with 0.61.0: TestRenewGeminiTUI in
// e2e):
//
//	gemini -i TEXT              the TUI sends TEXT as its first prompt, then stays interactive
//	gemini -p TEXT              headless: TEXT is the prompt
//	gemini --resume ID …        continues session ID (same chat file, history sent again)
//	gemini --session-id ID …    a new session with that id
//
// Gemini CLI has no flag that adds to the system prompt (GEMINI_SYSTEM_MD
// replaces all of it; GEMINI.md files live in the project or the user's
// folder), so a payload placed at launch becomes the start of the first
// prompt: pre_frame_leading, for pre_prompt_frame payloads only. The text
// travels in argv, readable by every local user through the process
// table (an @file reference would be read by a tool, not sent as the
// prompt), so adapters.Adapter refuses this placement unless the caller
// opted in (`lifeloop run --payload-argv-ok`; TestRenewGeminiTUI runs so,
// TestRenewArgvPlacementNeedsOptIn in renewal checks the refusal).

// Prompt options.
const (
	promptFlag      = "--prompt"
	promptShort     = "-p"
	interactiveFlag = "--prompt-interactive"
	interactiveShrt = "-i"
	resumeFlag      = "--resume"
)

func isPromptOption(name string) bool {
	switch name {
	case promptFlag, promptShort, interactiveFlag, interactiveShrt:
		return true
	}
	return false
}

// PlaceAtLaunch implements adapters.LaunchPlacer; argv is never modified.
// The text goes first in the session's first prompt: before the value of
// -p/--prompt or -i/--prompt-interactive (separated by a blank line), else
// before the first word of a positional prompt, else as `-i TEXT` at
// start. Target pre_frame_leading. ok is false for a command line that
// starts no session (a subcommand, --list-sessions, --help).
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out := slices.Clone(argv)
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return out, "", false
	}
	i := start
	firstPositional := -1
	for _, ca := range parseArgs(argv[start:]) {
		switch {
		case isPromptOption(ca.Option) && len(ca.Words) == 2:
			out[i+1] = text + "\n\n" + ca.Words[1]
			return out, contract.ManifestPreFrameLeading, true
		case isPromptOption(ca.Option) && strings.Contains(ca.Words[0], "="):
			name, v, _ := strings.Cut(ca.Words[0], "=")
			out[i] = name + "=" + text + "\n\n" + v
			return out, contract.ManifestPreFrameLeading, true
		case ca.Positional && firstPositional < 0 && ca.Words[0] != "--":
			firstPositional = i
		}
		i += len(ca.Words)
	}
	if firstPositional >= 0 {
		out[firstPositional] = text + "\n\n" + out[firstPositional]
		return out, contract.ManifestPreFrameLeading, true
	}
	return slices.Insert(out, start, interactiveShrt, text), contract.ManifestPreFrameLeading, true
}

// ReadyText implements adapters.InputReadyText: the prompt's placeholder,
// drawn once the TUI takes keys (measured: the first key taken 1.2 s
// after the start, the placeholder drawn at 1.34 s; left canonical mode
// at 1.7 s on a resume, before it took keys).
func (Harness) ReadyText() string { return "Type your message" }

// StopSignal implements adapters.Relauncher: sent to the process group
// (the outer node process ignores it; its child, the TUI, handles it),
// SIGTERM ends Gemini CLI with exit code 0 and its SessionEnd hook, from
// an empty prompt, a draft or an open permission dialog alike
// (e2e/renew_safe_test.go).
func (Harness) StopSignal() syscall.Signal { return syscall.SIGTERM }

// RelaunchArgv implements adapters.Relauncher; argv is never modified.
// Options that choose the session (-r/--resume, --session-id,
// --session-file) are one-shot and always removed. To resume, `--resume
// ID` goes at start and the interactive first prompt (-i, or positional
// words) is dropped: it was already sent; -p is kept, a headless run needs
// one. A fresh start keeps every prompt.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	if start <= 0 || start > len(argv) || (resume && id == "") || !startsSession(argv[start:]) {
		return slices.Clone(argv), false
	}
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, resumeFlag, id)
	}
	for _, ca := range parseArgs(argv[start:]) {
		switch {
		case options[ca.Option].picksSession:
		case resume && (ca.Option == interactiveFlag || ca.Option == interactiveShrt || ca.Positional):
		default:
			out = append(out, ca.Words...)
		}
	}
	return out, true
}
