package telemetry

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"golang.org/x/sys/unix"
)

// ErrNotFound is returned (wrapped) by [Discover] when no file matched
// within the bound. The supervisor turns it into a capability degradation.
var ErrNotFound = errors.New("telemetry: no harness telemetry file found")

// DefaultSlack is how much earlier than the launch time a file may have
// been created and still count as this launch's file (clock granularity,
// a harness that creates the file while lifeloop is still starting).
const DefaultSlack = 2 * time.Second

// Candidate is a file discovery may pick.
type Candidate struct {
	Path      string
	Born      time.Time // birth time where the file system keeps it, else mtime
	SessionID string    // the harness session id when the file names it
}

// Discoverer lists the files a harness launch may be writing. It holds no
// goroutines; [Discover], [Follower] and [Watch] drive it.
type Discoverer interface {
	// Roots are folders to watch for new candidates (they may not exist).
	Roots() []string
	// Candidates lists matching files, oldest first.
	Candidates() ([]Candidate, error)
	// SourceKind names the files this discoverer finds.
	SourceKind() SourceKind
}

// ClaudeProjectDirName returns the folder name Claude Code (checked against
// 2.1.197) uses under <config>/projects for the working folder cwd: every
// UTF-16 code unit outside [A-Za-z0-9] becomes '-' (so '/', '.', '_', ' ',
// and each non-ASCII character all become '-'), and a name longer than 200
// characters is cut to 200 and suffixed with '-' and the base-36 absolute
// value of the 32-bit Java string hash of cwd.
func ClaudeProjectDirName(cwd string) string {
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

// ClaudeDiscoverer finds the transcript of a Claude Code launch:
// <ConfigDir>/projects/<ClaudeProjectDirName(cwd)>/*.jsonl.
//
// Disambiguation: when SessionID is known (from a hook, or because the
// launch passed --session-id) only <SessionID>.jsonl, or a file whose
// first lines carry that sessionId, matches. Otherwise every transcript
// born at or after Launch-Slack matches, oldest first; concurrent launches
// in the same folder are kept apart by [Claims] (each takes the oldest
// file nobody else holds), which is exact when launches do not overlap
// by less than the time the harness takes to create its file, and can
// swap two simultaneous launches otherwise — pass SessionID to be exact.
type ClaudeDiscoverer struct {
	ConfigDir string // CLAUDE_CONFIG_DIR, else ~/.claude (resolved by the caller)
	Cwd       string
	Launch    time.Time
	Slack     time.Duration // default DefaultSlack
	SessionID string
}

// Dirs returns the project folders for Cwd: its own spelling and, if
// different, its symlink-resolved spelling (the harness uses the latter).
func (c *ClaudeDiscoverer) Dirs() []string {
	var dirs []string
	seen := map[string]bool{}
	for _, cwd := range cwdSpellings(c.Cwd) {
		d := filepath.Join(c.ConfigDir, "projects", ClaudeProjectDirName(cwd))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// Roots implements [Discoverer].
func (c *ClaudeDiscoverer) Roots() []string { return c.Dirs() }

// SourceKind implements [Discoverer].
func (c *ClaudeDiscoverer) SourceKind() SourceKind { return SourceTranscript }

// Candidates implements [Discoverer].
func (c *ClaudeDiscoverer) Candidates() ([]Candidate, error) {
	var out []Candidate
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
			born, ok := bornAt(p)
			if !ok {
				continue
			}
			cand := Candidate{Path: p, Born: born, SessionID: strings.TrimSuffix(name, ".jsonl")}
			if c.SessionID != "" {
				if cand.SessionID != c.SessionID && !headContains(p, []byte(`"sessionId":"`+c.SessionID+`"`)) {
					continue
				}
				cand.SessionID = c.SessionID
			} else if born.Before(c.Launch.Add(-slack(c.Slack))) {
				continue
			}
			out = append(out, cand)
		}
	}
	sortCandidates(out)
	return out, nil
}

// CodexDiscoverer finds the rollout of a Codex launch:
// <Home>/sessions/YYYY/MM/DD/rollout-*.jsonl born at or after Launch-Slack
// whose first line (session_meta) records Cwd. When SessionID (the thread
// id) is known, payload.id must equal it. Concurrent launches in one
// folder are kept apart as for [ClaudeDiscoverer].
type CodexDiscoverer struct {
	Home      string // CODEX_HOME, else ~/.codex (resolved by the caller)
	Cwd       string
	Launch    time.Time
	Slack     time.Duration
	SessionID string
	// Now returns the current time (default time.Now); it bounds which
	// date folders are scanned.
	Now func() time.Time
}

// Roots implements [Discoverer].
func (c *CodexDiscoverer) Roots() []string { return []string{filepath.Join(c.Home, "sessions")} }

// SourceKind implements [Discoverer].
func (c *CodexDiscoverer) SourceKind() SourceKind { return SourceRollout }

// Candidates implements [Discoverer]. Only the date folders from the day
// before Launch to the day after now (local and UTC) are scanned.
func (c *CodexDiscoverer) Candidates() ([]Candidate, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	start := c.Launch
	if start.IsZero() {
		start = now()
	}
	days := map[string]bool{}
	for d := start.Add(-24 * time.Hour); !d.After(now().Add(24 * time.Hour)); d = d.Add(12 * time.Hour) {
		days[d.Local().Format("2006/01/02")] = true
		days[d.UTC().Format("2006/01/02")] = true
	}
	cwds := cwdSpellings(c.Cwd)
	var out []Candidate
	for day := range days {
		dir := filepath.Join(c.Home, "sessions", filepath.FromSlash(day))
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			p := filepath.Join(dir, name)
			born, ok := bornAt(p)
			if !ok || (!c.Launch.IsZero() && born.Before(c.Launch.Add(-slack(c.Slack)))) {
				continue
			}
			id, cwd, ok := codexMeta(p)
			if !ok || !contains(cwds, cwd) || (c.SessionID != "" && id != c.SessionID) {
				continue
			}
			out = append(out, Candidate{Path: p, Born: born, SessionID: id})
		}
	}
	sortCandidates(out)
	return out, nil
}

// codexMeta reads the session_meta of a rollout's first line.
func codexMeta(path string) (id, cwd string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) || len(line) > DefaultMaxLine {
			return "", "", false // no complete first line yet: try again later
		}
	}
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			ID  string `json:"id"`
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "session_meta" {
		return "", "", false
	}
	return l.Payload.ID, l.Payload.Cwd, true
}

func cwdSpellings(cwd string) []string {
	out := []string{filepath.Clean(cwd)}
	if r, err := filepath.EvalSymlinks(cwd); err == nil && r != out[0] {
		out = append(out, r)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func slack(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultSlack
	}
	return d
}

func sortCandidates(c []Candidate) {
	sort.SliceStable(c, func(i, j int) bool {
		if !c[i].Born.Equal(c[j].Born) {
			return c[i].Born.Before(c[j].Born)
		}
		return c[i].Path < c[j].Path
	})
}

// bornAt returns the file's birth time (statx) or, where the file system
// does not record it, its modification time.
func bornAt(path string) (time.Time, bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME|unix.STATX_MTIME, &st); err == nil {
		if st.Mask&unix.STATX_BTIME != 0 && st.Btime.Sec != 0 {
			return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), true
		}
		return time.Unix(st.Mtime.Sec, int64(st.Mtime.Nsec)), true
	}
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// headContains reports whether the first 256 KiB of path contain needle.
func headContains(path string, needle []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 256<<10)
	n, _ := f.Read(buf)
	return bytes.Contains(buf[:n], needle)
}

// Claims keeps two sessions from following the same file.
type Claims interface {
	// Claim takes path for this session; false if another session holds it.
	// Claiming a path this session already holds succeeds.
	Claim(path string) bool
	// Release gives path back.
	Release(path string)
}

// DiscoverConfig configures [Discover].
type DiscoverConfig struct {
	Discoverer Discoverer
	// Claims, when set, excludes files other sessions hold and claims the
	// file picked.
	Claims Claims
	// Within bounds the search (default 30s).
	Within time.Duration
	// Poll and ForcePoll configure the folder watcher.
	Poll      time.Duration
	ForcePoll bool
}

// Discover waits until the discoverer lists a file not claimed by another
// session, claims it and returns it. It returns an error wrapping
// [ErrNotFound] when Within passes first, and ctx.Err() on cancellation.
func Discover(ctx context.Context, cfg DiscoverConfig) (Candidate, error) {
	within := cfg.Within
	if within <= 0 {
		within = 30 * time.Second
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var found Candidate
	var lastErr error
	try := func() bool {
		c, ok, err := pick(cfg.Discoverer, cfg.Claims, time.Time{}, false)
		lastErr = err
		if ok {
			found = c
		}
		return ok
	}
	if try() {
		return found, nil
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	dw := &DirWatcher{Roots: cfg.Discoverer.Roots(), Poll: cfg.Poll, SafetyPoll: cfg.Poll, ForcePoll: cfg.ForcePoll}
	_ = dw.Run(wctx, func(TailMode, error) {}, func(string) {
		if try() {
			stop()
		}
	})
	if found.Path != "" {
		return found, nil
	}
	if err := parent.Err(); err != nil {
		return Candidate{}, err
	}
	detail := ""
	if lastErr != nil {
		detail = fmt.Sprintf(" (last scan error: %v)", lastErr)
	}
	return Candidate{}, fmt.Errorf("%w within %s under %s%s; telemetry for this session is unavailable", ErrNotFound, within, strings.Join(cfg.Discoverer.Roots(), ", "), detail)
}

// pick returns the first candidate born after `after` that can be claimed:
// the oldest one, or the newest one when newest is set.
func pick(d Discoverer, claims Claims, after time.Time, newest bool) (Candidate, bool, error) {
	cands, err := d.Candidates()
	if err != nil {
		return Candidate{}, false, err
	}
	if newest {
		for i, j := 0, len(cands)-1; i < j; i, j = i+1, j-1 {
			cands[i], cands[j] = cands[j], cands[i]
		}
	}
	for _, c := range cands {
		if !after.IsZero() && !c.Born.After(after) {
			continue
		}
		if claims == nil || claims.Claim(c.Path) {
			return c, true, nil
		}
	}
	return Candidate{}, false, nil
}
