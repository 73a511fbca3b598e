package claude

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// Claude Code's background sessions (measured with 2.1.332 and the
// loopback mock model; docs/harnesses.md, "Background sessions"). Claude
// starts the processes of `claude --bg` itself — its daemon, one PTY host
// per session and the session inside it, or a pre-started "warm spare"
// that a later `claude --bg` claims — each through the process wrapper
// CLAUDE_CODE_PROCESS_WRAPPER (or the user setting processWrapper) names:
// an argv prefix that must exec the rest. `lifeloop procwrap` is that
// prefix: this file says which of those command lines are sessions, where
// a spare learns its session, and how lifeloop's prefix is set and chains
// the person's own.

// Claude's variables and options of its background processes.
const (
	processWrapperVar = "CLAUDE_CODE_PROCESS_WRAPPER"
	// processWrapperKey is the settings key of the same value (the
	// variable wins; honoured from user, managed and --settings files).
	processWrapperKey = "processWrapper"
	launchedByVar     = "CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS"
	ptyHostFlag       = "--bg-pty-host"
	spareFlag         = "--bg-spare"
)

var _ adapters.ProcessWrapped = Harness{}

// WrappedStart implements adapters.ProcessWrapped. Sessions are a cold
// session (`claude --session-id ID PROMPT`), a session Claude restarts in
// place (`claude --resume ID …`) and a warm spare (`claude --bg-spare
// SOCK`, whose session is learned once it is claimed). The daemon
// (`claude daemon run …`), its workers, the PTY hosts (`claude
// --bg-pty-host SOCK COLS ROWS -- WRAPPER claude …`: the session comes
// through the wrapper again, by itself) and anything else pass through.
func (Harness) WrappedStart(argv, env []string) adapters.WrappedStart {
	if len(argv) < 2 {
		return adapters.WrappedStart{}
	}
	var st adapters.WrappedStart
	switch a := argv[1]; {
	case a == ptyHostFlag, !strings.HasPrefix(a, "-"):
		return st // a PTY host, or a subcommand (daemon run, completion …)
	}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		name, value, inline := strings.Cut(a, "=")
		switch name {
		case spareFlag:
			st.Session = true
		case sessionIDFlag, resumeFlag, "-r":
			if !inline && i+1 < len(argv) {
				value = argv[i+1]
			}
			if validUUID(value) {
				st.Session, st.SessionID = true, value
			}
		case ptyHostFlag:
			return adapters.WrappedStart{}
		}
	}
	if st.Session {
		st.LaunchedBy = launchedBy(adapters.EnvValue(env, launchedByVar))
	}
	return st
}

// launchedBy reads a CLAUDE_CODE_LAUNCHED_BY_SESSION_IDS value: session
// ids separated by commas (Claude's other words there, "saved" and
// "clear:ID", name no session that started this one).
func launchedBy(v string) []string {
	var ids []string
	for _, id := range strings.Split(v, ",") {
		if id = strings.TrimSpace(id); validUUID(id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// registryEntry is the part of Claude's session registry
// (<config>/sessions/<pid>.json) lifeloop reads.
type registryEntry struct {
	Pid       int    `json:"pid"`
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
	// StartedAt (ms) is when the process took the session.
	StartedAt int64 `json:"startedAt"`
}

// WrappedSession implements adapters.ProcessWrapped: Claude's session
// registry, <config>/sessions/<pid>.json, names the session a process
// serves and its folder once it has one (a spare's file appears when it is
// claimed); the daemon's roster names who started it and when (rosterWorker).
func (Harness) WrappedSession(env []string, pid int) (adapters.WrappedClaim, bool) {
	dir, err := configDir(env)
	if err != nil {
		return adapters.WrappedClaim{}, false
	}
	b, err := os.ReadFile(filepath.Join(dir, "sessions", strconv.Itoa(pid)+".json"))
	if err != nil {
		return adapters.WrappedClaim{}, false
	}
	var e registryEntry
	if json.Unmarshal(b, &e) != nil || e.Pid != pid || !validUUID(e.SessionID) || !filepath.IsAbs(e.Cwd) {
		return adapters.WrappedClaim{}, false
	}
	w, _ := rosterWorker(dir, e.SessionID, pid)
	c := adapters.WrappedClaim{ID: e.SessionID, Cwd: e.Cwd, LaunchedBy: launchedBy(w.Dispatch.Env[launchedByVar])}
	switch {
	case w.Dispatch.CreatedAt > 0:
		c.Since = time.UnixMilli(w.Dispatch.CreatedAt)
	case e.StartedAt > 0:
		c.Since = time.UnixMilli(e.StartedAt).Add(-registryLag)
	}
	return c, true
}

// registryLag is how much earlier than the registry's startedAt a claimed
// spare's session may have been asked for: the registry was seen written
// 1.4 s after the daemon's claim (2.1.332); the roster's dispatch time,
// read first, needs no such margin.
const registryLag = 5 * time.Second

// roster is the part of the background daemon's roster,
// <config>/daemon/roster.json, lifeloop reads: one worker per session,
// with what the daemon handed it (measured with 2.1.332). The file holds
// the workers' socket keys too; they are not decoded.
type roster struct {
	Workers map[string]worker `json:"workers"`
}

// worker is one session's worker in the roster.
type worker struct {
	SessionID string `json:"sessionId"`
	// ReplPid is the session's own process (for a spare, the one that
	// was pre-started); the roster's pid is its PTY host.
	ReplPid  int `json:"replPid"`
	Dispatch struct {
		// CreatedAt (ms) is when the `claude --bg` asked for it.
		CreatedAt int64             `json:"createdAt"`
		Env       map[string]string `json:"env"`
	} `json:"dispatch"`
}

// rosterWorker returns the roster's worker of session served by process
// pid; false when the roster has none (yet). A warm spare was started
// before anyone asked for it, so its own environment names no launcher,
// but the dispatch the daemon handed it does (the environment of the
// `claude --bg` it dispatched), and says when it was asked for.
func rosterWorker(dir, session string, pid int) (worker, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "daemon", "roster.json"))
	if err != nil {
		return worker{}, false
	}
	var r roster
	if json.Unmarshal(b, &r) != nil {
		return worker{}, false
	}
	for _, w := range r.Workers {
		if w.SessionID == session && (w.ReplPid == 0 || w.ReplPid == pid) {
			return w, true
		}
	}
	return worker{}, false
}

// WrapperEnv implements adapters.ProcessWrapped: CLAUDE_CODE_PROCESS_WRAPPER
// set to lifeloop's prefix as a JSON array of words (Claude's own format
// for an argv prefix). The wrapper the person had — the variable, else
// processWrapper of the user's settings.json, which the variable would
// otherwise hide — is chained. A value that already is lifeloop's is kept.
func (Harness) WrapperEnv(wrapper func(chain []string) []string, env []string) ([]string, error) {
	own := adapters.EnvValue(env, processWrapperVar)
	if own == "" {
		own = userProcessWrapper(env)
	}
	chain, err := ParseProcessWrapper(own)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; fix or unset it", processWrapperVar, err)
	}
	if isLifeloopPrefix(chain, wrapper(nil)) {
		return nil, nil
	}
	prefix := wrapper(chain)
	if len(prefix) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(prefix)
	if err != nil {
		return nil, err
	}
	return []string{processWrapperVar + "=" + string(b)}, nil
}

// isLifeloopPrefix reports whether words already begin with lifeloop's
// prefix (its program and command).
func isLifeloopPrefix(words, prefix []string) bool {
	if len(words) < len(prefix) || len(prefix) == 0 {
		return false
	}
	for i, p := range prefix {
		if words[i] != p {
			return false
		}
	}
	return true
}

// userProcessWrapper returns processWrapper of the user's Claude settings
// ("" when unset or unreadable): a string or an array of words, returned
// as Claude's JSON array form.
func userProcessWrapper(env []string) string {
	dir, err := configDir(env)
	if err != nil {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(dir, "settings.json"))
	if err != nil {
		return ""
	}
	var s map[string]json.RawMessage
	if json.Unmarshal(b, &s) != nil {
		return ""
	}
	raw := s[processWrapperKey]
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	return string(raw)
}

// ParseProcessWrapper reads a process-wrapper value as Claude does: a
// JSON array of strings, or words split on blanks with "…" quoting. ""
// is no wrapper (nil).
func ParseProcessWrapper(v string) ([]string, error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "null" {
		return nil, nil
	}
	if strings.HasPrefix(v, "[") {
		var words []string
		if err := json.Unmarshal([]byte(v), &words); err != nil {
			return nil, fmt.Errorf("%q is not a JSON array of strings", v)
		}
		return checkWrapperWords(words)
	}
	var words []string
	var cur strings.Builder
	in, have := false, false
	for _, r := range v {
		switch {
		case r == '"':
			in, have = !in, true
		case !in && (r == ' ' || r == '\t' || r == '\n'):
			if have {
				words = append(words, cur.String())
				cur.Reset()
				have = false
			}
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if in {
		return nil, fmt.Errorf("%q has an unclosed quote", v)
	}
	if have {
		words = append(words, cur.String())
	}
	return checkWrapperWords(words)
}

// checkWrapperWords refuses what Claude refuses: no words, an empty word,
// or a first word that is not an absolute path.
func checkWrapperWords(words []string) ([]string, error) {
	if len(words) == 0 {
		return nil, nil
	}
	for _, w := range words {
		if w == "" {
			return nil, errors.New("an empty word")
		}
	}
	if !filepath.IsAbs(words[0]) {
		return nil, fmt.Errorf("the launcher %q is not an absolute path", words[0])
	}
	return words, nil
}

// configDir is $CLAUDE_CONFIG_DIR, else ~/.claude.
func configDir(env []string) (string, error) {
	if d := adapters.EnvValue(env, configDirVar); d != "" {
		return d, nil
	}
	home := adapters.EnvValue(env, "HOME")
	if home == "" {
		return "", errors.New("neither CLAUDE_CONFIG_DIR nor HOME is set; cannot find Claude's folder")
	}
	return filepath.Join(home, ".claude"), nil
}

// validUUID reports whether s is a UUID in its canonical text form.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return false
			}
		default:
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return false
			}
		}
	}
	return true
}
