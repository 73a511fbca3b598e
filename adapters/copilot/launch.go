package copilot

import (
	"slices"
	"syscall"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

// A launch's command line (measured with 1.0.102 against the mock model):
//
//	copilot -p TEXT              one prompt, then exit
//	copilot -i TEXT              the TUI, TEXT sent as its first prompt
//	copilot --session-id UUID    a new session with that id (or resumes it when it exists)
//	copilot --resume[=ID]        continues session ID (id, 7+ hex prefix or name; a picker without)
//	copilot --continue           continues the most recent session

// PinSession implements adapters.SessionPinner: `--session-id UUID` at
// start for a command line that starts a session and chooses none, so
// telemetry follows exactly this launch's session folder.
func (Harness) PinSession(argv []string, start int) ([]string, string) {
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return argv, ""
	}
	for _, ca := range parseArgs(argv[start:]) {
		if options[ca.Option].picksSession {
			return argv, ""
		}
	}
	id := kit.NewUUID()
	return slices.Insert(slices.Clone(argv), start, sessionIDFlag, id), id
}

// ResumedSession implements adapters.SessionResumer: --resume=UUID and
// --session-id UUID (of a session that exists: lifeloop cannot tell, so a
// full UUID is taken as resumed only with --resume) name it, --continue
// the latest of the harness. A prefix, a name or a bare --resume (the
// picker) cannot be told from the command line.
func (Harness) ResumedSession(argv []string, start int) (string, bool) {
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return "", false
	}
	for _, ca := range parseArgs(argv[start:]) {
		switch ca.Option {
		case continueFlag:
			return "", true
		case resumeFlag, "-r":
			if id := optionValue(ca); adapters.IsUUID(id) {
				return id, true
			}
			return "", false
		}
	}
	return "", false
}

// StopSignal implements adapters.Relauncher: SIGTERM, sent to the process
// group (the npm loader and the native binary it starts), ends the TUI
// with its sessionEnd hook (reason user_exit) and session.shutdown in the
// session file, from an empty prompt or a draft alike.
func (Harness) StopSignal() syscall.Signal { return syscall.SIGTERM }

// RelaunchArgv implements adapters.Relauncher; argv is never modified.
// Options that choose the session (--resume, --continue, --session-id,
// --connect) are one-shot and always removed. To resume, `--resume=ID`
// goes at start and the TUI's first prompt (-i) is dropped: it was
// already sent; -p is kept, a one-shot needs one. A fresh start keeps
// every prompt.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	if start <= 0 || start > len(argv) || (resume && id == "") || !startsSession(argv[start:]) {
		return slices.Clone(argv), false
	}
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, resumeFlag+"="+id)
	}
	for _, ca := range parseArgs(argv[start:]) {
		switch {
		case options[ca.Option].picksSession:
		case resume && (ca.Option == interactive || ca.Option == interShort):
		default:
			out = append(out, ca.Words...)
		}
	}
	return out, true
}
