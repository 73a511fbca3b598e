package codex

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// A launch's command line (measured with 0.169: TestCodexAcceptsPreparedLaunch
// here, TestLaunchPlacementReachesModel, TestRelaunchResumesConversation
// and TestPayloadNeverInArgv in e2e):
//
//	codex --no-daemon …                 the TUI keeps its processes in lifeloop's process group
//	codex -c developer_instructions=…   a developer message in the model request of a new thread
//	                                    (TUI and exec)
//	codex -p NAME …                     $CODEX_HOME/NAME.config.toml layered over config.toml: its
//	                                    developer_instructions land in the same developer message
//	codex resume|exec resume ID TEXT    the first user message of a resumed thread (Codex ignores
//	                                    developer_instructions on resume)
//
// The payload body never stays in argv for a new thread: ExternalizePlacement
// turns `-c developer_instructions=…` into a profile file of lifeloop's
// own in $CODEX_HOME (0600, removed when the session ends) and `-p NAME`.
// Measured against the other private channels Codex 0.169 has, the
// profile disturbs least: --profile takes a plain name only (no path), so
// the file must be in $CODEX_HOME; a private copy of CODEX_HOME would move
// the rollouts, the thread database, auth and hook trust away from the
// user's; model_instructions_file replaces Codex's base instructions
// instead of adding a developer message; hooks run only once trusted.
// Not private, so refused unless the caller opts in (see
// adapters.WithArgvPayloads): a resumed thread's prompt (Codex has no
// file form for it), and a launch that chooses its own profile (Codex
// layers one profile only).

// PrepareLaunch implements adapters.LaunchPreparer: it adds --no-daemon to
// a launch that opens the interactive TUI — no subcommand (optionally an
// initial prompt), or one of resume, fork, agents — so the session's
// processes stay inside the process group lifeloop supervises instead of
// leaving a detached app-server daemon behind. The flag goes right after
// the program (`codex --no-daemon …`), where Codex accepts it for the TUI
// and for those subcommands. Nothing is added when the user already chose:
// --no-daemon, or --remote (the TUI then talks to that server), among the
// root options or anywhere after the subcommand or prompt.
func (Harness) PrepareLaunch(argv []string, start int) []string {
	args := argv[start:]
	opts, at := rootArgs(args)
	if slices.ContainsFunc(opts, choosesServer) || at < len(args) && slices.ContainsFunc(args[at+1:], choosesServer) {
		return argv
	}
	if sub, _ := subcommand(args); sub != "" && !tuiSubcommands[sub] {
		return argv
	}
	return slices.Insert(argv, start, "--no-daemon")
}

// choosesServer reports whether a word says which app-server the TUI uses.
func choosesServer(a string) bool {
	return a == "--no-daemon" || a == "--remote" || strings.HasPrefix(a, "--remote=")
}

// PlaceAtLaunch implements adapters.LaunchPlacer; argv is never modified.
//
//   - New thread: `-c developer_instructions=<TOML string>` after the
//     program (a root option, so it reaches exec and the TUI), target
//     pre_session. This overrides a developer_instructions set in the
//     user's config.toml for this launch; when argv itself already
//     overrides developer_instructions, ok is false rather than dropping
//     either text.
//   - Resumed thread (`resume`, `fork`, `exec resume`, `exec fork`): the
//     prompt argument, target pre_frame_leading (see promptPlace).
//
// ok is false for a command line that starts no conversation (`codex
// login`, --help).
func (Harness) PlaceAtLaunch(argv []string, start int, text string) ([]string, contract.ManifestPlacementClass, bool) {
	out := slices.Clone(argv)
	if !startsSession(argv[start:]) {
		return out, "", false
	}
	for i, arg := range argv[start:] {
		if (arg == "-c" || arg == "--config") && start+i+1 < len(argv) && isDeveloperInstructions(argv[start+i+1]) {
			return out, "", false
		}
		if v, found := strings.CutPrefix(arg, "--config="); found && isDeveloperInstructions(v) {
			return out, "", false
		}
	}
	if resumed, ok := promptPlace(argv, start, text); ok {
		return resumed, contract.ManifestPreFrameLeading, true
	} else if resumed != nil {
		return out, "", false
	}
	return slices.Insert(out, start, "-c", "developer_instructions="+TOMLString(text)), contract.ManifestPreSession, true
}

// profileSuffix ends the name of a profile file in $CODEX_HOME.
const profileSuffix = ".config.toml"

// ExternalizePlacement implements adapters.PlacementExternalizer: the
// `-c developer_instructions=<TOML string>` PlaceAtLaunch put among the
// root options goes into a new profile file in $CODEX_HOME (WriteIn),
// holding `developer_instructions = <TOML string>`, and the two words
// become `-p NAME`. argv is returned unchanged when no envelope was
// placed there, and when the command line chooses a profile itself
// (-p/--profile).
func (Harness) ExternalizePlacement(argv []string, start int, files adapters.PlacementFiles) ([]string, error) {
	if start <= 0 || start > len(argv) {
		return argv, nil
	}
	args := argv[start:]
	for _, a := range args {
		if a == "-p" || a == "--profile" || strings.HasPrefix(a, "--profile=") {
			return argv, nil
		}
	}
	at := -1
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "--" {
			break
		}
		if (a == "-c" || a == "--config") && i+1 < len(args) && isDeveloperInstructions(args[i+1]) && adapters.HasTransport(args[i+1]) {
			at = start + i
			break
		}
		i = optionEnd(args, i, false)
	}
	if at < 0 {
		return argv, nil
	}
	home := envHome(files.Env)
	if home == "" {
		return argv, errors.New("neither CODEX_HOME nor HOME is set in the harness environment: no folder for the launch placement's profile")
	}
	_, value, _ := strings.Cut(argv[at+1], "=")
	path, err := files.WriteIn(home, profileSuffix, "developer_instructions = "+strings.TrimSpace(value)+"\n")
	if err != nil {
		return argv, err
	}
	out := slices.Clone(argv)
	out[at], out[at+1] = "-p", strings.TrimSuffix(filepath.Base(path), profileSuffix)
	return out, nil
}

// startsSession reports whether Codex arguments open a conversation: the
// TUI (optionally with a prompt), exec (also exec resume/fork), resume or
// fork.
func startsSession(args []string) bool {
	sub, _ := subcommand(args)
	switch sub {
	case "", "exec", "e", "resume", "fork":
		return !slices.Contains(args, "--help") && !slices.Contains(args, "-h") && !slices.Contains(args, "--version") && !slices.Contains(args, "-V")
	}
	return false
}

func isDeveloperInstructions(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return strings.TrimSpace(k) == "developer_instructions"
}

// promptPlace handles a command line that continues an existing thread
// (`codex resume|fork …`, `codex exec resume|fork …`). Codex builds
// developer instructions only when a thread starts, so on a resumed thread
// -c developer_instructions never reaches the model. There the text goes
// into the prompt argument, the first user message of the resumed session:
// alone when there is no prompt, else before it, separated by a blank
// line. It returns (nil, false) for a command line that starts a new
// thread, and (argv, false) when the text cannot be placed (the prompt is
// "-", read from stdin).
func promptPlace(argv []string, start int, text string) ([]string, bool) {
	args := argv[start:]
	sub, at := subcommand(args)
	if sub == "" {
		return nil, false
	}
	head := slices.Clone(argv[:start+at+1])
	rest := args[at+1:]
	if sub == "exec" || sub == "e" {
		eopts, pos := positionalsAfter(rest)
		if len(pos) == 0 || (pos[0] != "resume" && pos[0] != "fork") {
			return nil, false
		}
		return withPrompt(append(head, eopts...), pos, slices.Contains(eopts, "--last"), text)
	}
	if sub != "resume" && sub != "fork" {
		return nil, false
	}
	opts, pos := positionalsAfter(rest)
	return withPrompt(append(head, opts...), append([]string{""}, pos...), slices.Contains(opts, "--last"), text)
}

// withPrompt appends pos[0] (the resume/fork word, or "" for none), the
// thread id (unless last), and the prompt with text placed first.
func withPrompt(out, pos []string, last bool, text string) ([]string, bool) {
	if pos[0] != "" {
		out = append(out, pos[0])
	}
	rest := pos[1:]
	if !last && len(rest) > 0 {
		out = append(out, rest[0])
		rest = rest[1:]
	}
	switch {
	case len(rest) == 0:
		return append(out, text), true
	case len(rest) == 1 && rest[0] != "-":
		return append(out, text+"\n\n"+rest[0]), true
	}
	return out, false
}

// StopSignal implements adapters.Relauncher: the Codex TUI ends on
// SIGINT (exit code 130), restoring its terminal, from an empty prompt
// or a draft alike (e2e/renew_safe_test.go). The rollout is written as
// things happen, so nothing it holds is lost.
func (Harness) StopSignal() syscall.Signal { return syscall.SIGINT }

// RelaunchArgv implements adapters.Relauncher; argv is never modified. A
// conversation choice is one-shot and always replaced:
//
//	TUI   `codex [OPTS] [PROMPT]`, `codex [OPTS] resume|fork [ID|--last] [PROMPT]`
//	      resume → `codex [OPTS] resume ID`; fresh → `codex [OPTS]` (the
//	      prompt is dropped for resume only, kept for a fresh start)
//	exec  `codex [OPTS] exec [EOPTS] [resume ID|--last] [PROMPT]`
//	      resume → `codex [OPTS] exec [EOPTS] resume ID [PROMPT]`; fresh → without resume
//
// The prompt of `codex exec` is kept in both cases: exec needs one. ok is
// false for any other subcommand.
func (Harness) RelaunchArgv(argv []string, start int, id string, resume bool) ([]string, bool) {
	args := argv[start:]
	sub, at := subcommand(args)
	head := slices.Clone(argv[:start+at])
	rest := args[at:]
	switch sub {
	case "":
		// TUI; rest is [PROMPT] plus trailing options.
		opts, pos := positionalsAfter(rest)
		out := slices.Concat(head, opts)
		if resume {
			return append(out, "resume", id), true
		}
		return append(out, pos...), true
	case "resume", "fork":
		opts, _ := positionalsAfter(rest[1:])
		opts = slices.DeleteFunc(opts, func(s string) bool { return s == "--last" || s == "--all" })
		out := slices.Concat(head, opts)
		if resume {
			return append(out, "resume", id), true
		}
		return out, true
	case "exec", "e":
		// exec [EOPTS] [resume|fork [ROPTS] [ID|--last]] [PROMPT]
		eopts, pos := positionalsAfter(rest[1:])
		var prompt []string
		if len(pos) > 0 && (pos[0] == "resume" || pos[0] == "fork") {
			// `exec resume ID PROMPT` or `exec resume --last PROMPT`.
			ids := pos[1:]
			if slices.Contains(eopts, "--last") {
				prompt = ids
			} else if len(ids) > 1 {
				prompt = ids[1:]
			}
			eopts = slices.DeleteFunc(eopts, func(s string) bool { return s == "--last" || s == "--all" })
		} else {
			prompt = pos
		}
		out := slices.Concat(head, []string{sub})
		out = append(out, eopts...)
		if resume {
			out = append(out, "resume", id)
		}
		return append(out, prompt...), true
	}
	return slices.Clone(argv), false
}

// ResumedSession implements adapters.SessionResumer: `codex resume ID`,
// `codex exec resume ID [PROMPT]` continue thread ID (a UUID; a thread
// name is not read here), `exec resume --last` the folder's most recent
// one, appended to the same rollout. The TUI's `resume --last` skips
// sessions of `codex exec` unless --include-non-interactive, which the
// rollouts do not tell apart here: it is followed as a new session, as
// are --all (any folder), the picker, and fork.
func (Harness) ResumedSession(argv []string, start int) (string, bool) {
	if start <= 0 || start > len(argv) {
		return "", false
	}
	args := argv[start:]
	sub, at := subcommand(args)
	var opts, pos []string
	switch sub {
	case "resume":
		opts, pos = positionalsAfter(args[at+1:])
		if slices.Contains(opts, "--last") && !slices.Contains(opts, "--include-non-interactive") {
			return "", false
		}
	case "exec", "e":
		opts, pos = positionalsAfter(args[at+1:])
		if len(pos) == 0 || pos[0] != "resume" {
			return "", false
		}
		pos = pos[1:]
	default:
		return "", false
	}
	switch {
	case slices.Contains(opts, "--all"):
		return "", false
	case slices.Contains(opts, "--last"):
		return "", true
	case len(pos) > 0 && adapters.IsUUID(pos[0]):
		return strings.ToLower(pos[0]), true
	}
	return "", false
}
