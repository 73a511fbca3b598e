package claude

import (
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/contract"
)

// Launch placement, relaunch and session pinning (measured with 2.1.197
// and the loopback mock model: TestLaunchPlacementReachesModel,
// TestRelaunchResumesConversation in e2e):
//
//	--append-system-prompt TEXT       appended to the system prompt, in -p and interactive
//	                                  mode, new or resumed (--resume) conversation
//	--append-system-prompt-file PATH  the same, read from a file (ExternalizePlacement)
//	--resume ID                       continues conversation ID
//	--session-id UUID                 a new conversation with that id (its transcript is
//	                                  <UUID>.jsonl)

// PlaceAtLaunch implements adapters.LaunchPlacer: `--append-system-prompt
// TEXT` at start, target pre_session. When argv already has
// --append-system-prompt, that value and text are joined with a blank line
// into one flag (Claude keeps only one). Subcommands, --help and
// --version start no session.
//
// A resumed conversation also gets `--system-prompt-snapshot off` when the
// Claude it runs has that option (see freshSystemPrompt).
func (h Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out, class, ok := placeText(argv, start, text)
	if ok {
		out = h.freshSystemPrompt(out, start)
	}
	return out, class, ok
}

// freshSystemPrompt makes a resumed conversation take this launch's system
// prompt. From some release after 2.1.197 (2.1.330 has it), Claude records
// a conversation's system prompt at its first request and sends that
// record on every resume, ignoring a new --append-system-prompt[-file]:
// the payload placed for the resumed session would never reach the model
// (TestRenewClaudeTUIUnderLifeloop against 2.1.330). `--system-prompt-snapshot
// off` renders the prompt afresh, as 2.1.197 always did. Releases without
// the option reject it, so it is added only when the facts the launch
// read about the Claude argv starts say it has it (snapshotSupported);
// argv that sets it already is left alone.
func (h Harness) freshSystemPrompt(argv []string, start int) []string {
	resumes := false
	for _, ca := range parseArgs(argv[start:]) {
		switch ca.Option {
		case snapshotFlag:
			return argv
		case "-r", resumeFlag, "-c", "--continue":
			resumes = true
		}
	}
	if !resumes || !h.snapshotSupported() {
		return argv
	}
	return slices.Insert(slices.Clone(argv), start, snapshotFlag, "off")
}

func placeText(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out := slices.Clone(argv)
	if !validStart(argv, start) || !startsSession(argv[start:]) {
		return out, "", false
	}
	for i := start; i < len(out); i++ {
		switch a := out[i]; {
		case a == "--":
			i = len(out)
		case a == appendPromptFlag && i+1 < len(out):
			out[i+1] = out[i+1] + "\n\n" + text
			return out, contract.ManifestPreSession, true
		case strings.HasPrefix(a, appendPromptFlag+"="):
			out[i] = a + "\n\n" + text
			return out, contract.ManifestPreSession, true
		case options[a].arity == variadic:
			for i+1 < len(out) && !strings.HasPrefix(out[i+1], "-") {
				i++
			}
		case options[a].arity == required:
			i++
		}
	}
	return slices.Insert(out, start, appendPromptFlag, text), contract.ManifestPreSession, true
}

// ExternalizePlacement implements adapters.PlacementExternalizer: the
// envelope PlaceAtLaunch put in --append-system-prompt TEXT goes into the
// file files.Write returns, read with --append-system-prompt-file PATH, so the
// payload is not in the process table. argv is returned unchanged when no
// envelope was placed, or when the user already passes
// --append-system-prompt-file (Claude would read only one of them).
func (Harness) ExternalizePlacement(argv []string, start int, files adapters.PlacementFiles) ([]string, error) {
	if !validStart(argv, start) {
		return argv, nil
	}
	at, inline := -1, false
	for i := start; i < len(argv); i++ {
		switch a := argv[i]; {
		case a == "--":
			i = len(argv)
		case a == appendPromptFileFlag || strings.HasPrefix(a, appendPromptFileFlag+"="):
			return argv, nil
		case a == appendPromptFlag && i+1 < len(argv):
			at = i
			i++
		case strings.HasPrefix(a, appendPromptFlag+"="):
			at, inline = i, true
		}
	}
	if at < 0 {
		return argv, nil
	}
	text := ""
	if inline {
		text = strings.TrimPrefix(argv[at], appendPromptFlag+"=")
	} else {
		text = argv[at+1]
	}
	if !adapters.HasTransport(text) {
		return argv, nil
	}
	path, err := files.Write(text)
	if err != nil {
		return argv, err
	}
	out := slices.Clone(argv)
	if inline {
		out[at] = appendPromptFileFlag + "=" + path
	} else {
		out[at], out[at+1] = appendPromptFileFlag, path
	}
	return out, nil
}

// RelaunchArgv implements adapters.Relauncher. Options that pick a
// conversation (-r/--resume [ID], -c/--continue, --session-id ID,
// --fork-session, --from-pr [X]) are one-shot and always removed. To
// resume, `--resume ID` goes at start and, in interactive mode, the
// initial prompt argument is dropped too (it was already sent); in -p mode
// the prompt is kept: a print-mode run needs one. A fresh start keeps the
// prompt.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	if !validStart(argv, start) || (resume && id == "") || !startsSession(argv[start:]) {
		return slices.Clone(argv), false
	}
	args := parseArgs(argv[start:])
	print := isPrint(args)
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, resumeFlag, id)
	}
	for _, ca := range args {
		switch {
		case options[ca.Option].picksSession:
		case ca.Positional && resume && !print:
		default:
			out = append(out, ca.Words...)
		}
	}
	return out, true
}

// PinSession implements adapters.SessionPinner: a command line that does
// not choose its conversation gets `--session-id <new uuid>` at its first
// own argument, so telemetry finds exactly this launch's transcript
// (<uuid>.jsonl) even when other launches run in the same folder.
func (Harness) PinSession(argv []string, _ int) ([]string, string) {
	if len(argv) == 0 || picksSession(argv) {
		return argv, ""
	}
	id := kit.NewUUID()
	return adapters.InsertArgs(argv, []string{sessionIDFlag, id}), id
}

// picksSession reports whether the Claude command line argv chooses its
// conversation itself (an option before any "--" picks one).
func picksSession(argv []string) bool {
	for _, a := range argv[1:] {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		if options[name].picksSession {
			return true
		}
	}
	return false
}

// validStart reports whether start can be the harness's first own
// argument in argv (past the program).
func validStart(argv []string, start int) bool { return start > 0 && start <= len(argv) }
