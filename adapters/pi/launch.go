package pi

import (
	"slices"
	"syscall"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Launch placement and relaunch (measured with 0.73.1 and the loopback
// mock model: TestRunPiPayloadAtLaunch, TestRenewPiTUIUnderLifeloop in
// e2e):
//
//	--append-system-prompt TEXT   appended to the system prompt (repeatable); when TEXT names an
//	                              existing file, the file's content is appended instead
//	--session ID|PATH             continues that session (its file gets the new entries)
//
// Pi builds its system prompt at every launch, so the appended text
// reaches a resumed session too.

// PlaceAtLaunch implements adapters.LaunchPlacer: `--append-system-prompt
// TEXT` at start, target pre_session. Pi takes the option more than once,
// so a user's own --append-system-prompt is left as it is. Package
// commands, --help, --version, --list-models and --export start no
// session.
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out := slices.Clone(argv)
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return out, "", false
	}
	return slices.Insert(out, start, appendPromptFlag, text), contract.ManifestPreSession, true
}

// ExternalizePlacement implements adapters.PlacementExternalizer: each
// --append-system-prompt whose value holds a transport envelope gets the
// path of a file files.Write stored it in instead; Pi appends the file's
// content, so the payload is not in the process table.
func (Harness) ExternalizePlacement(argv []string, start int, files adapters.PlacementFiles) ([]string, error) {
	if start <= 0 || start > len(argv) {
		return argv, nil
	}
	out, cloned := argv, false
	i := start
	for _, ca := range parseArgs(argv[start:]) {
		if ca.option == appendPromptFlag && len(ca.words) == 2 && adapters.HasTransport(ca.words[1]) {
			path, err := files.Write(ca.words[1])
			if err != nil {
				return argv, err
			}
			if !cloned {
				out, cloned = slices.Clone(argv), true
			}
			out[i+1] = path
		}
		i += len(ca.words)
	}
	return out, nil
}

// StopSignal implements adapters.Relauncher: Pi's TUI ends on SIGTERM
// (exit code 143) from an empty prompt or a draft alike
// (e2e/renew_safe_test.go). It skips the extension's session_shutdown
// (shared harness facts: the handler re-raises the signal), which the
// renewal does not need: it records the session's end itself, and the
// session file is written as things happen. Typing /quit would send a
// draft with it.
func (Harness) StopSignal() syscall.Signal { return syscall.SIGTERM }

// RelaunchArgv implements adapters.Relauncher; argv is never modified.
// Options that choose the session (--continue, --resume, --session,
// --fork, --no-session, --session-dir) are one-shot and always removed.
// To resume, `--session ID` goes at start and, in the TUI, the prompt
// arguments are dropped too (they were already sent); with -p or --mode
// json|rpc the prompt is kept, since such a run needs one. A fresh start
// keeps the prompt.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	if start <= 0 || start > len(argv) || (resume && id == "") || !startsSession(argv[start:]) {
		return slices.Clone(argv), false
	}
	args := parseArgs(argv[start:])
	print := isPrint(args)
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, sessionFlag, id)
	}
	for _, ca := range args {
		switch {
		case options[ca.option].picksSession:
		case ca.positional && resume && !print:
		default:
			out = append(out, ca.words...)
		}
	}
	return out, true
}
