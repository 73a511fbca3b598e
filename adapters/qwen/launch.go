package qwen

import (
	"syscall"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

// A launch's command line (measured with 0.24.4 against the mock model):
//
//	qwen TEXT | qwen -p TEXT    one prompt, then exit
//	qwen -i TEXT                the TUI, TEXT sent as its first prompt
//	qwen --session-id UUID      a new session with that id (its file <id>.jsonl)
//	qwen --resume ID            continues session ID in the same file (a picker without ID)
//	qwen --continue             continues the most recent session of the folder

// session is how Qwen Code's command line chooses its session: a new
// one's id with --session-id, one resumed with `--resume ID`, its TUI's
// first prompt (-i) sent already to a resumed session.
var session = kit.SessionOptions{
	Args:    parseArgs,
	Starts:  startsSession,
	Picks:   func(option string) bool { return options[option].picksSession },
	PinFlag: sessionIDFlag,
	Resume:  func(id string) []string { return []string{resumeFlag, id} },
	Sent:    func(ca adapters.Arg) bool { return ca.Option == interactive || ca.Option == interShort },
}

// PinSession implements adapters.SessionPinner: `--session-id UUID` at
// start for a command line that starts a session and chooses none, so
// telemetry follows exactly this launch's file.
func (Harness) PinSession(argv []string, start int) ([]string, string) {
	return session.Pin(argv, start)
}

// ResumedSession implements adapters.SessionResumer: --resume UUID names
// the session (unless --fork-session makes a new one), --continue the
// latest of the folder. A bare --resume (the picker) cannot be told from
// the command line.
func (Harness) ResumedSession(argv []string, start int) (string, bool) {
	if start <= 0 || start > len(argv) || !startsSession(argv[start:]) {
		return "", false
	}
	var id string
	resumed := false
	for _, ca := range parseArgs(argv[start:]) {
		switch ca.Option {
		case "--fork-session":
			return "", false
		case "-c", "--continue":
			resumed = true
		case resumeFlag, "-r":
			id = kit.OptionValue(ca)
			resumed = adapters.IsUUID(id)
		}
	}
	if !resumed {
		return "", false
	}
	return id, true
}

// ReadyText implements adapters.InputReadyText: the prompt's placeholder,
// drawn once the TUI takes keys. Qwen Code's TUI leaves canonical mode
// before it does (measured on a loaded machine after a renewal: keys
// typed as the relaunched TUI entered raw mode were lost, with the hook
// bridge or without), so typed keys wait for this text too.
func (Harness) ReadyText() string { return "Type your message" }

// StopSignal implements adapters.Relauncher: SIGTERM, sent to the process
// group (the npm entry and the Node it starts again with --expose-gc),
// ends the TUI with exit 0 (measured at its prompt).
func (Harness) StopSignal() syscall.Signal { return syscall.SIGTERM }

// RelaunchArgv implements adapters.Relauncher; argv is never modified.
// Options that choose the session (--resume, --continue, --session-id,
// --fork-session) are one-shot and always removed. To resume, `--resume
// ID` goes at start and the TUI's first prompt (-i) is dropped: it was
// already sent. A fresh start keeps every prompt.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	return session.Relaunch(argv, start, id, resume)
}
