package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	ucli "github.com/urfave/cli/v2"

	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// procwrapOptions are the words of `lifeloop procwrap`, read by hand: a
// harness puts them before each command line it starts in the background,
// so the first word that is not one of them starts that command line.
type procwrapOptions struct {
	Adapter string
	// Chain is the person's own process wrapper, run next (a prefix).
	Chain []string
	// Observe is the pid a detached observer follows (procwrap_observe.go).
	Observe    int
	Session    string
	LaunchedBy []string
	// Since is when procwrap saw the session asked for (its start,
	// before the exec): the observer's history bound (--since, Unix ms).
	Since time.Time
	// Argv is the harness's command line.
	Argv []string
}

func procwrapCommand(e *env) *ucli.Command {
	return &ucli.Command{
		Name:      "procwrap",
		Usage:     "be a harness's process wrapper: record each background session it starts, exec the rest",
		ArgsUsage: "--adapter ID [--chain JSON] COMMAND [ARG...]",
		Description: `A harness that runs sessions in the background starts each of
its processes as "<wrapper> COMMAND ARG...",
and the wrapper must exec COMMAND. 'lifeloop run' sets lifeloop as that
wrapper for the harness it starts; 'lifeloop host apply --process-wrapper'
sets it in the person's settings. For a process that runs a session,
procwrap starts a detached observer — a lifeloop session of its own
(telemetry_only) following the session's files and its process until it
ends, linked to the session that started it — and then execs COMMAND (the
harness's process keeps its pid). Its service and terminal hosts are exec'd
unrecorded. --chain JSON (an array of words) is the wrapper the person had
set: procwrap execs that one, with COMMAND after it.`,
		SkipFlagParsing: true,
		Action: func(c *ucli.Context) error {
			if a := c.Args().First(); a == "--help" || a == "-h" {
				return ucli.ShowSubcommandHelp(c)
			}
			o, err := parseProcwrap(c.Args().Slice())
			if err == nil {
				err = o.check()
			}
			if err != nil {
				return usageErrorf("procwrap: %v", err)
			}
			if o.Observe > 0 {
				return procwrapObserve(e, o)
			}
			return procwrapExec(e, o)
		},
	}
}

// parseProcwrap reads procwrap's words; the first word that is not one of
// its options starts the harness's command line.
func parseProcwrap(args []string) (procwrapOptions, error) {
	var o procwrapOptions
	i := 0
	value := func(name string) (string, error) {
		if i+1 >= len(args) {
			return "", fmt.Errorf("%s needs a value", name)
		}
		i++
		return args[i], nil
	}
	for ; i < len(args); i++ {
		var v string
		var err error
		switch a := args[i]; a {
		case "--adapter", "--chain", "--observe", "--session", "--launched-by", "--since":
			if v, err = value(a); err != nil {
				return o, err
			}
			switch a {
			case "--adapter":
				o.Adapter = v
			case "--chain":
				if err := json.Unmarshal([]byte(v), &o.Chain); err != nil || len(o.Chain) == 0 || !filepath.IsAbs(o.Chain[0]) {
					return o, fmt.Errorf("--chain %q: want a JSON array of words, the first an absolute path", v)
				}
			case "--observe":
				if o.Observe, err = strconv.Atoi(v); err != nil || o.Observe <= 0 {
					return o, fmt.Errorf("--observe %q: want a process id", v)
				}
			case "--session":
				o.Session = v
			case "--launched-by":
				o.LaunchedBy = strings.Split(v, ",")
			case "--since":
				ms, err := strconv.ParseInt(v, 10, 64)
				if err != nil || ms <= 0 {
					return o, fmt.Errorf("--since %q: want a time in Unix milliseconds", v)
				}
				o.Since = time.UnixMilli(ms)
			}
		case "--":
			o.Argv = args[i+1:]
			i = len(args)
		default:
			o.Argv = args[i:]
			i = len(args)
		}
	}
	return o, nil
}

// check says what a procwrap command line lacks.
func (o procwrapOptions) check() error {
	if o.Adapter == "" {
		return fmt.Errorf("--adapter ID is missing (the harness whose process wrapper this is)")
	}
	if o.Observe == 0 && len(o.Argv) == 0 {
		return fmt.Errorf("no command to run: the harness puts its command line after procwrap's words")
	}
	return nil
}

// procwrapExec starts the observer of a session the harness starts, then
// execs the person's wrapper or the command itself: never a fork, so the
// harness's process keeps this pid, and the environment (with the
// wrapper's variable) passes through unchanged.
func procwrapExec(e *env, o procwrapOptions) error {
	if ad, err := e.Registry().Lookup(o.Adapter); err == nil {
		if pw := ad.ProcessWrapped(); pw != nil {
			if st := pw.WrappedStart(o.Argv, e.Environ); st.Session {
				startObserver(e, o.Adapter, st.SessionID, st.LaunchedBy, e.Now())
			}
		}
	}
	argv := append(append([]string{}, o.Chain...), o.Argv...)
	path := argv[0]
	if !filepath.IsAbs(path) {
		p, err := exec.LookPath(path)
		if err != nil {
			return exitf(exitcode.Failed, "procwrap: cannot find %s: %v", path, err)
		}
		path = p
	}
	err := syscall.Exec(path, argv, e.Environ)
	return exitf(exitcode.Failed, "procwrap: exec %s: %v", path, err)
}

// startObserver starts `lifeloop procwrap --observe <this pid>` in a
// session of its own, detached from the harness's terminal and process
// group, with no standard streams: it outlives this exec and follows the
// process until it ends. A failure is left unreported: the harness's
// session runs regardless, and this process's output is its terminal.
func startObserver(e *env, adapter, session string, launchedBy []string, since time.Time) {
	self, err := os.Executable()
	if err != nil {
		return
	}
	args := []string{"procwrap", "--adapter", adapter, "--observe", strconv.Itoa(os.Getpid())}
	if session != "" {
		args = append(args, "--session", session, "--since", strconv.FormatInt(since.UnixMilli(), 10))
	}
	if len(launchedBy) > 0 {
		args = append(args, "--launched-by", strings.Join(launchedBy, ","))
	}
	cmd := exec.Command(self, args...)
	cmd.Env = e.Environ
	cmd.Dir = e.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if cmd.Start() == nil {
		_ = cmd.Process.Release()
	}
}

// ProcessWrapperPrefix is lifeloop's process-wrapper prefix for adapter
// (the running program's absolute path and procwrap's words), chaining
// the person's own wrapper when chain is not empty.
func ProcessWrapperPrefix(adapter string, chain []string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("cannot find lifeloop's own program: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return nil, fmt.Errorf("cannot resolve lifeloop's own program: %w", err)
	}
	if len(chain) > 1 && chain[1] == "procwrap" {
		// Another lifeloop's prefix (another build, or one host apply
		// installed): replaced, keeping the wrapper it chains.
		o, err := parseProcwrap(chain[2:])
		if err != nil {
			return nil, fmt.Errorf("the process wrapper set is lifeloop's, but unreadable: %w", err)
		}
		chain = o.Chain
	}
	out := []string{self, "procwrap", "--adapter", adapter}
	if len(chain) > 0 {
		b, _ := json.Marshal(chain)
		out = append(out, "--chain", string(b))
	}
	return out, nil
}

// processWrapperOrNone is ProcessWrapperPrefix, nil when lifeloop cannot
// name its own program (background sessions then go unrecorded).
func processWrapperOrNone(adapter string, chain []string) []string {
	p, err := ProcessWrapperPrefix(adapter, chain)
	if err != nil {
		return nil
	}
	return p
}
