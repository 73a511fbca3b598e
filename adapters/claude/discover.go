package claude

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
)

// projectNameVar renames the project folder (Claude Code 2.1.331 and
// later): read only when CLAUDE_CONFIG_DIR is set, and only a name of 1 to
// 64 letters, digits, '_' and '-' that is not a reserved Windows device
// name (con, prn, aux, nul, com0-9, lpt0-9); otherwise ignored (read in
// the 2.1.332 bundle).
const projectNameVar = "CLAUDE_CODE_PROJECT_DIR_NAME"

// validProjectName reports whether Claude Code takes name as a project
// folder's name.
func validProjectName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
		default:
			return false
		}
	}
	switch l := strings.ToLower(name); {
	case l == "con", l == "prn", l == "aux", l == "nul":
		return false
	case len(l) == 4 && (strings.HasPrefix(l, "com") || strings.HasPrefix(l, "lpt")) && l[3] >= '0' && l[3] <= '9':
		return false
	}
	return true
}

// ProjectNameFromEnv returns the project folder name the harness
// environment env sets through CLAUDE_CODE_PROJECT_DIR_NAME, "" when
// Claude Code would not use it.
func ProjectNameFromEnv(env []string) string {
	name := adapters.EnvValue(env, projectNameVar)
	if adapters.EnvValue(env, configDirVar) == "" || !validProjectName(name) {
		return ""
	}
	return name
}

// ProjectDirName returns the folder name Claude Code (checked against
// 2.1.197) uses under <config>/projects for the working folder cwd: every
// UTF-16 code unit outside [A-Za-z0-9] becomes '-' (so '/', '.', '_', ' ',
// and each non-ASCII character all become '-'), and a name longer than 200
// characters is cut to 200 and suffixed with '-' and the base-36 absolute
// value of the 32-bit Java string hash of cwd.
func ProjectDirName(cwd string) string {
	units := utf16.Encode([]rune(cwd))
	out := make([]byte, len(units))
	for i, u := range units {
		switch {
		case u >= 'a' && u <= 'z', u >= 'A' && u <= 'Z', u >= '0' && u <= '9':
			out[i] = byte(u)
		default:
			out[i] = '-'
		}
	}
	const maxName = 200
	if len(out) <= maxName {
		return string(out)
	}
	var h int32
	for _, u := range units {
		h = h*31 + int32(u)
	}
	v := int64(h)
	if v < 0 {
		v = -v
	}
	return string(out[:maxName]) + "-" + strconv.FormatInt(v, 36)
}

// discoverer finds the transcript of a Claude Code launch:
// <ConfigDir>/projects/<ProjectDirName(cwd)>/*.jsonl.
//
// Disambiguation: when SessionID is known (the launch passed --session-id,
// or continues that session) only <SessionID>.jsonl matches, of any age:
// Claude names a transcript by its session id, so the folder, which keeps
// every past transcript, is not listed (a launch beside 2 000 of them
// spent 15 ms of processor time on its first listing).
// Otherwise every transcript born at or after Launch-Slack matches, oldest
// first; concurrent launches in the same folder are kept apart by
// telemetry.Claims (each takes the oldest file nobody else holds), which
// is exact when launches do not overlap by less than the time the harness
// takes to create its file, and can swap two simultaneous launches
// otherwise — pass SessionID to be exact.
type discoverer struct {
	ConfigDir string // CLAUDE_CONFIG_DIR, else ~/.claude (resolved by the caller)
	// ProjectName, when set, is the project folder's name instead of
	// ProjectDirName(Cwd) (ProjectNameFromEnv).
	ProjectName string
	Cwd         string
	Launch      time.Time
	Slack       time.Duration // default: telemetry.BornBefore's
	SessionID   string
	births      telemetry.FileFacts[struct{}]
}

// Dirs returns the project folders for Cwd: its own spelling and, if
// different, its symlink-resolved spelling (the harness uses the latter).
func (c *discoverer) Dirs() []string {
	if c.ProjectName != "" {
		return []string{filepath.Join(c.ConfigDir, "projects", c.ProjectName)}
	}
	var dirs []string
	seen := map[string]bool{}
	for _, cwd := range telemetry.CwdSpellings(c.Cwd) {
		d := filepath.Join(c.ConfigDir, "projects", ProjectDirName(cwd))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Roots implements telemetry.Discoverer.
func (c *discoverer) Roots() []string { return c.Dirs() }

// SourceKind implements telemetry.Discoverer.
func (c *discoverer) SourceKind() telemetry.SourceKind { return telemetry.SourceTranscript }

// FlatRoots implements telemetry.FlatRoots: a transcript is a file of the
// project folder itself; the folders beside it (a session's subagents and
// tool results) hold none lifeloop follows, and the project folder of a
// long-used project holds thousands of transcripts that a walk would list
// at every look.
func (c *discoverer) FlatRoots() bool { return true }

// Candidates implements telemetry.Discoverer.
func (c *discoverer) Candidates() ([]telemetry.Candidate, error) {
	var out []telemetry.Candidate
	if c.SessionID != "" {
		for _, dir := range c.Dirs() {
			p := filepath.Join(dir, c.SessionID+".jsonl")
			if born, ok := c.births.Born(p); ok {
				out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: c.SessionID})
			}
		}
		telemetry.SortCandidates(out)
		return out, nil
	}
	for _, dir := range c.Dirs() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			p := filepath.Join(dir, name)
			born, ok := c.births.Born(p)
			if !ok {
				continue
			}
			if telemetry.BornBefore(born, c.Launch, c.Slack) {
				continue
			}
			out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: strings.TrimSuffix(name, ".jsonl")})
		}
	}
	telemetry.SortCandidates(out)
	return out, nil
}
