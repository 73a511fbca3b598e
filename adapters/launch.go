package adapters

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lifeloop/lifeloop/contract"
)

// Launch-time placement and relaunch.
//
// PlaceAtLaunch carries a rendered transport envelope into a new harness
// session through its command line; RelaunchArgv gives the command line
// that continues (or freshly restarts) a harness session after lifeloop
// stopped it for a renewal. Both were measured against the pinned real
// binaries (Claude Code 2.1.197, Codex 0.169.0) with the loopback mock
// model (TestLaunchPlacementReachesModel, TestRelaunchResumesConversation
// in e2e):
//
//	claude  --append-system-prompt TEXT         appended to the system prompt, in -p and interactive
//	                                            mode, new or resumed (--resume) conversation
//	codex   -c developer_instructions="TEXT"    a developer message in the model request, for a new
//	                                            thread (TUI and exec)
//	codex   resume|exec resume ID TEXT          the first user message of a resumed thread (Codex
//	                                            ignores developer_instructions on resume)
//
// The text travels in argv, so it is visible in the process table to the
// same user (and to others where /proc is not mounted with hidepid).
// For Claude, ExternalizePlacement moves it into a private file read with
// --append-system-prompt-file (measured: 2.1.197 reads it in -p and
// interactive mode); Codex has no file form for developer instructions or
// a resumed thread's prompt, so there it stays in argv.

// PlaceAtLaunch returns argv with text delivered into the new session the
// command starts, the manifest placement class the delivery uses, and
// ok=true; argv itself is never modified. ok is false (argv returned
// unchanged) when the adapter has no launch placement, or when argv does
// not start a harness session (e.g. `codex login`, `claude mcp list`), or
// when argv already sets the slot in a way that cannot be combined:
//
//   - claude: `--append-system-prompt TEXT` after the program. When argv
//     already has --append-system-prompt, that value and text are joined
//     with a blank line into one flag (Claude keeps only one).
//   - codex, new thread: `-c developer_instructions=<TOML string>` after
//     the program (a root option, so it reaches exec and the TUI). This
//     overrides a developer_instructions set in the user's config.toml for
//     this launch; when argv itself already overrides developer_instructions,
//     ok is false rather than dropping either text.
//   - codex, resumed thread (`resume`, `fork`, `exec resume`, `exec fork`):
//     the prompt argument, target pre_frame_leading (see codexPromptPlace).
func (a *Adapter) PlaceAtLaunch(argv []string, text string) (out []string, target contract.ManifestPlacementClass, ok bool) {
	out = slices.Clone(argv)
	start := parseLaunch(argv).argStart
	if start > len(argv) || start == 0 {
		return out, "", false
	}
	switch a.ID {
	case "claude":
		if !claudeStartsSession(argv[start:]) {
			return out, "", false
		}
		return claudePlace(out, start, text), contract.ManifestPreSession, true
	case "codex":
		if !codexStartsSession(argv[start:]) {
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
		if resumed, ok := codexPromptPlace(argv, start, text); ok {
			return resumed, contract.ManifestPreFrameLeading, true
		} else if resumed != nil {
			return out, "", false
		}
		return slices.Insert(out, start, "-c", "developer_instructions="+TOMLString(text)), contract.ManifestPreSession, true
	}
	return out, "", false
}

// codexPromptPlace handles a Codex command line that continues an existing
// thread (`codex resume|fork …`, `codex exec resume|fork …`). Codex builds
// developer instructions only when a thread starts, so on a resumed thread
// -c developer_instructions never reaches the model (measured with 0.169:
// TestRelaunchResumesConversation). There the text goes into the prompt
// argument, the first user message of the resumed session: alone when
// there is no prompt, else before it, separated by a blank line. It
// returns (nil, false) for a command line that starts a new thread, and
// (argv, false) when the text cannot be placed (the prompt is "-", read
// from stdin).
func codexPromptPlace(argv []string, start int, text string) ([]string, bool) {
	args := argv[start:]
	sub, at := codexSubcommand(args)
	if sub == "" {
		return nil, false
	}
	head := slices.Clone(argv[:start+at+1])
	rest := args[at+1:]
	if sub == "exec" || sub == "e" {
		eopts, pos := codexPositionalsAfter(rest)
		if len(pos) == 0 || (pos[0] != "resume" && pos[0] != "fork") {
			return nil, false
		}
		out, ok := codexWithPrompt(append(head, eopts...), pos, slices.Contains(eopts, "--last"), text)
		return out, ok
	}
	if sub != "resume" && sub != "fork" {
		return nil, false
	}
	opts, pos := codexPositionalsAfter(rest)
	return codexWithPrompt(append(head, opts...), append([]string{""}, pos...), slices.Contains(opts, "--last"), text)
}

// codexWithPrompt appends pos[0] (the resume/fork word, or "" for none),
// the thread id (unless last), and the prompt with text placed first.
func codexWithPrompt(out, pos []string, last bool, text string) ([]string, bool) {
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

func isDeveloperInstructions(kv string) bool {
	k, _, _ := strings.Cut(kv, "=")
	return strings.TrimSpace(k) == "developer_instructions"
}

// claudePlace inserts --append-system-prompt, or merges text into an
// existing one.
func claudePlace(argv []string, start int, text string) []string {
	for i := start; i < len(argv); i++ {
		switch arg := argv[i]; {
		case arg == "--":
			i = len(argv)
		case arg == "--append-system-prompt" && i+1 < len(argv):
			argv[i+1] = argv[i+1] + "\n\n" + text
			return argv
		case strings.HasPrefix(arg, "--append-system-prompt="):
			argv[i] = arg + "\n\n" + text
			return argv
		case claudeValueOptions[arg] == claudeValueVariadic:
			for i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "-") {
				i++
			}
		case claudeValueOptions[arg] == claudeValueRequired:
			i++
		}
	}
	return slices.Insert(argv, start, "--append-system-prompt", text)
}

// TOMLString renders s as a TOML basic string ("..."), escaping what TOML
// requires: quote, backslash, and every control character (including
// DEL). Invalid UTF-8 bytes become U+FFFD, as TOML text must be UTF-8.
func TOMLString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r == utf8.RuneError:
				b.WriteRune(utf8.RuneError)
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\u%04X`, r)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// RelaunchArgv returns the command line that starts the harness again
// after lifeloop stopped it for a renewal, and ok=true; argv (the command
// line the session was first launched with, before PrepareLaunch) is never
// modified. With resume and a harnessSessionID it continues that harness
// conversation; otherwise it starts a fresh one. ok is false when the
// adapter has no known relaunch path (every adapter but claude and codex),
// when argv does not start a harness session, or when resume is asked
// without a harnessSessionID.
//
// Arguments that pick a conversation are one-shot and always removed
// before the new choice is added:
//
//	claude  -r/--resume [ID], -c/--continue, --session-id ID, --fork-session, --from-pr [X]
//	        resume: `--resume ID` after the program; in interactive mode the
//	        initial prompt argument is dropped too (it was already sent).
//	        In -p mode the prompt is kept: a print-mode run needs one.
//	codex   TUI `codex [OPTS] [PROMPT]`, `codex [OPTS] resume|fork [ID|--last] [PROMPT]`
//	        resume → `codex [OPTS] resume ID`; fresh → `codex [OPTS]` (prompt dropped
//	        for resume only, kept for a fresh start)
//	        exec `codex [OPTS] exec [EOPTS] [resume ID|--last] [PROMPT]`
//	        resume → `codex [OPTS] exec [EOPTS] resume ID [PROMPT]`; fresh → without resume
//
// The prompt of `codex exec` is kept in both cases: exec needs one.
func (a *Adapter) RelaunchArgv(argv []string, harnessSessionID string, resume bool) ([]string, bool) {
	start := parseLaunch(argv).argStart
	if start == 0 || start > len(argv) || (resume && harnessSessionID == "") {
		return slices.Clone(argv), false
	}
	switch a.ID {
	case "claude":
		if !claudeStartsSession(argv[start:]) {
			return slices.Clone(argv), false
		}
		return claudeRelaunch(argv, start, harnessSessionID, resume), true
	case "codex":
		out, ok := codexRelaunch(argv, start, harnessSessionID, resume)
		return out, ok
	}
	return slices.Clone(argv), false
}

// Claude Code option arities (from `claude --help`, 2.1.197).
const (
	claudeValueRequired = 1 + iota
	claudeValueOptional
	claudeValueVariadic
)

var claudeValueOptions = map[string]int{
	"--add-dir": claudeValueVariadic, "--allowedTools": claudeValueVariadic, "--allowed-tools": claudeValueVariadic,
	"--betas": claudeValueVariadic, "--disallowedTools": claudeValueVariadic, "--disallowed-tools": claudeValueVariadic,
	"--file": claudeValueVariadic, "--mcp-config": claudeValueVariadic, "--tools": claudeValueVariadic,
	"--agent": claudeValueRequired, "--agents": claudeValueRequired, "--append-system-prompt": claudeValueRequired,
	"--append-system-prompt-file": claudeValueRequired, "--system-prompt": claudeValueRequired,
	"--system-prompt-file": claudeValueRequired, "--debug-file": claudeValueRequired, "--effort": claudeValueRequired,
	"--fallback-model": claudeValueRequired, "--input-format": claudeValueRequired, "--json-schema": claudeValueRequired,
	"--max-budget-usd": claudeValueRequired, "--model": claudeValueRequired, "-n": claudeValueRequired,
	"--name": claudeValueRequired, "--output-format": claudeValueRequired, "--permission-mode": claudeValueRequired,
	"--plugin-dir": claudeValueRequired, "--plugin-url": claudeValueRequired,
	"--remote-control-session-name-prefix": claudeValueRequired, "--session-id": claudeValueRequired,
	"--setting-sources": claudeValueRequired, "--settings": claudeValueRequired, "--max-turns": claudeValueRequired,
	"-d": claudeValueOptional, "--debug": claudeValueOptional, "--from-pr": claudeValueOptional,
	"--prompt-suggestions": claudeValueOptional, "--remote-control": claudeValueOptional,
	"-r": claudeValueOptional, "--resume": claudeValueOptional, "-w": claudeValueOptional, "--worktree": claudeValueOptional,
}

// claudeSubcommands are Claude Code's subcommands: none of them starts a
// conversation.
var claudeSubcommands = map[string]bool{
	"agents": true, "auth": true, "auto-mode": true, "config": true, "doctor": true, "install": true,
	"mcp": true, "plugin": true, "plugins": true, "setup-token": true, "update": true, "upgrade": true,
	"migrate-installer": true,
}

// claudeArg is one parsed Claude argument: an option with its values, or
// a positional word.
type claudeArg struct {
	words      []string
	option     string // "" for a positional
	positional bool
}

// claudeArgs splits Claude arguments into options (with their values) and
// positionals, the way Commander reads them.
func claudeArgs(args []string) []claudeArg {
	var out []claudeArg
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			for _, rest := range args[i:] {
				out = append(out, claudeArg{words: []string{rest}, positional: rest != "--"})
			}
			return out
		case strings.HasPrefix(arg, "-") && arg != "-":
			name, _, inline := strings.Cut(arg, "=")
			ca := claudeArg{words: []string{arg}, option: name}
			if !inline {
				switch claudeValueOptions[name] {
				case claudeValueRequired:
					if i+1 < len(args) {
						i++
						ca.words = append(ca.words, args[i])
					}
				case claudeValueOptional:
					if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						ca.words = append(ca.words, args[i])
					}
				case claudeValueVariadic:
					for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
						i++
						ca.words = append(ca.words, args[i])
					}
				}
			}
			out = append(out, ca)
		default:
			out = append(out, claudeArg{words: []string{arg}, positional: true})
		}
	}
	return out
}

// claudeStartsSession reports whether Claude arguments start a
// conversation (no subcommand, not --help/--version).
func claudeStartsSession(args []string) bool {
	for _, ca := range claudeArgs(args) {
		switch {
		case ca.option == "-h" || ca.option == "--help" || ca.option == "-v" || ca.option == "--version":
			return false
		case ca.positional:
			return !claudeSubcommands[ca.words[0]]
		}
	}
	return true
}

var claudeSessionPickers = map[string]bool{
	"-r": true, "--resume": true, "-c": true, "--continue": true, "--session-id": true,
	"--fork-session": true, "--from-pr": true,
}

func claudeRelaunch(argv []string, start int, id string, resume bool) []string {
	args := claudeArgs(argv[start:])
	print := slices.ContainsFunc(args, func(ca claudeArg) bool { return ca.option == "-p" || ca.option == "--print" })
	out := slices.Clone(argv[:start])
	if resume {
		out = append(out, "--resume", id)
	}
	for _, ca := range args {
		switch {
		case claudeSessionPickers[ca.option]:
		case ca.positional && resume && !print:
		default:
			out = append(out, ca.words...)
		}
	}
	return out
}

// codexStartsSession reports whether Codex arguments open a conversation:
// the TUI (optionally with a prompt), exec (also exec resume/fork),
// resume or fork.
func codexStartsSession(args []string) bool {
	sub, _ := codexSubcommand(args)
	switch sub {
	case "", "exec", "e", "resume", "fork":
		return !slices.Contains(args, "--help") && !slices.Contains(args, "-h") && !slices.Contains(args, "--version") && !slices.Contains(args, "-V")
	}
	return false
}

// codexSubcommand returns the first positional of Codex arguments when it
// is a subcommand ("" when there is none, or it is the TUI's prompt) and
// its index (len(args) when none).
func codexSubcommand(args []string) (string, int) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", len(args)
		case a == "-i" || a == "--image":
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
			}
		case codexValueOptions[a]:
			i++
		case strings.HasPrefix(a, "-"):
		default:
			if codexSubcommands[a] {
				return a, i
			}
			return "", i
		}
	}
	return "", len(args)
}

// codexExecValueOptions are `codex exec` options (0.169) that take a
// separate value, besides the global ones.
var codexExecValueOptions = map[string]bool{"-o": true, "--output-last-message": true, "--output-schema": true, "--color": true}

// codexPositionalsAfter splits args[from:] into options (kept in order,
// with their values) and positional words.
func codexPositionalsAfter(args []string) (opts, pos []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			return opts, pos
		case a == "-i" || a == "--image":
			opts = append(opts, a)
			for i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				opts = append(opts, args[i])
			}
		case (codexValueOptions[a] || codexExecValueOptions[a]) && i+1 < len(args):
			opts = append(opts, a, args[i+1])
			i++
		case strings.HasPrefix(a, "-") && a != "-":
			opts = append(opts, a)
		default:
			pos = append(pos, a)
		}
	}
	return opts, pos
}

func codexRelaunch(argv []string, start int, id string, resume bool) ([]string, bool) {
	args := argv[start:]
	sub, at := codexSubcommand(args)
	head := slices.Clone(argv[:start+at])
	rest := args[at:]
	switch sub {
	case "":
		// TUI; rest is [PROMPT] plus trailing options.
		opts, pos := codexPositionalsAfter(rest)
		out := slices.Concat(head, opts)
		if resume {
			return append(out, "resume", id), true
		}
		return append(out, pos...), true
	case "resume", "fork":
		opts, _ := codexPositionalsAfter(rest[1:])
		opts = slices.DeleteFunc(opts, func(s string) bool { return s == "--last" || s == "--all" })
		out := slices.Concat(head, opts)
		if resume {
			return append(out, "resume", id), true
		}
		return out, true
	case "exec", "e":
		eargs := rest[1:]
		// exec [EOPTS] [resume|fork [ROPTS] [ID|--last]] [PROMPT]
		eopts, pos := codexPositionalsAfter(eargs)
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

// ExternalizePlacement moves a transport envelope PlaceAtLaunch put on a
// Claude Code command line (--append-system-prompt TEXT) into a file:
// write stores the text privately and returns its path, and the flag
// becomes --append-system-prompt-file PATH, so the payload is not in the
// process table. argv is returned unchanged for other adapters, when no
// envelope was placed, or when the user already passes
// --append-system-prompt-file (Claude would read only one of them).
func (a *Adapter) ExternalizePlacement(argv []string, write func(text string) (string, error)) ([]string, error) {
	if a.ID != "claude" {
		return argv, nil
	}
	start := parseLaunch(argv).argStart
	if start == 0 || start > len(argv) {
		return argv, nil
	}
	at, inline := -1, false
	for i := start; i < len(argv); i++ {
		switch arg := argv[i]; {
		case arg == "--":
			i = len(argv)
		case arg == "--append-system-prompt-file" || strings.HasPrefix(arg, "--append-system-prompt-file="):
			return argv, nil
		case arg == "--append-system-prompt" && i+1 < len(argv):
			at = i
			i++
		case strings.HasPrefix(arg, "--append-system-prompt="):
			at, inline = i, true
		}
	}
	if at < 0 {
		return argv, nil
	}
	text := ""
	if inline {
		text = strings.TrimPrefix(argv[at], "--append-system-prompt=")
	} else {
		text = argv[at+1]
	}
	if !hasTransport(text) {
		return argv, nil
	}
	path, err := write(text)
	if err != nil {
		return argv, err
	}
	out := slices.Clone(argv)
	if inline {
		out[at] = "--append-system-prompt-file=" + path
	} else {
		out[at], out[at+1] = "--append-system-prompt-file", path
	}
	return out, nil
}

func hasTransport(s string) bool {
	for _, m := range transportMarkers {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// transportMarkers begin a rendered transport envelope as it appears in a
// placed argv element: verbatim (claude, codex prompt) or as a TOML string
// (codex developer_instructions).
var transportMarkers = []string{`{"payloads":[`, `{\"payloads\":[`}

// RedactPlacement returns argv with every transport envelope placed by
// PlaceAtLaunch withheld: from the envelope's start to the end of the
// element, the text is replaced by "<continuation payloads withheld: N
// bytes>". A command line kept in session records or printed by status
// must go through it, because payload bodies are never shown. argv itself
// is never modified.
func RedactPlacement(argv []string) []string {
	out := slices.Clone(argv)
	for i, arg := range out {
		for _, m := range transportMarkers {
			if at := strings.Index(arg, m); at >= 0 {
				out[i] = fmt.Sprintf("%s<continuation payloads withheld: %d bytes>", arg[:at], len(arg)-at)
				break
			}
		}
	}
	return out
}
