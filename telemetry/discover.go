package telemetry

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// ErrNotFound is returned (wrapped) by [Discover] when no file matched
// within the bound. The supervisor turns it into a capability degradation.
var ErrNotFound = errors.New("telemetry: no harness telemetry file found")

// DefaultSlack is how much earlier than the launch time a file may have
// been created and still count as this launch's file where the time is
// coarse: a file system that keeps whole seconds (FAT two), a database
// row. A birth time finer than a second takes FineSlack (BornBefore).
const DefaultSlack = 2 * time.Second

// FineSlack is how much earlier than the launch a file stamped finer than
// a second may be born and still be the launch's: the kernel stamps files
// from a clock up to a tick behind the one lifeloop reads. A wider slack
// took the file of a one-shot that ended a second before the next one
// started in the same folder for the next one's.
const FineSlack = 50 * time.Millisecond

// BornBefore reports whether a file born at born (or named with that time)
// was created before a launch at launch, allowing slack or, when slack is
// not positive, the default for born's precision: DefaultSlack for a time
// in whole seconds, else FineSlack.
func BornBefore(born, launch time.Time, slack time.Duration) bool {
	if slack <= 0 {
		slack = FineSlack
		if born.Nanosecond() == 0 {
			slack = DefaultSlack
		}
	}
	return born.Before(launch.Add(-slack))
}

// Candidate is a file discovery may pick.
type Candidate struct {
	Path      string
	Born      time.Time // birth time where the file system keeps it, else mtime
	SessionID string    // the harness session id when the file names it
	// Updated is the last write to the session when the store records it
	// (a database row); zero for a file, whose modification time says.
	Updated time.Time
}

// LastWrite returns when c was last written: Updated, else the file's
// modification time, else Born.
func (c Candidate) LastWrite() time.Time {
	if !c.Updated.IsZero() {
		return c.Updated
	}
	if fi, err := os.Stat(c.Path); err == nil {
		return fi.ModTime()
	}
	return c.Born
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

// FolderSkipper is implemented by a Discoverer whose roots hold folders
// that cannot hold a candidate (a dated tree's past days): the folder
// watchers neither list nor watch them, so their cost does not grow with
// the harness's history.
type FolderSkipper interface {
	// SkipFolder reports whether dir, a folder below one of Roots, and
	// everything under it can hold no candidate now.
	SkipFolder(dir string) bool
}

// FlatRoots is implemented by a Discoverer whose candidates all lie
// directly in its roots: the folder watchers then watch the roots alone
// and never list them, so a root holding thousands of past sessions (and
// their folders) costs nothing at each look.
type FlatRoots interface {
	// FlatRoots reports whether no folder below a root can hold a
	// candidate.
	FlatRoots() bool
}

// isFlat reports whether d's roots are flat (FlatRoots).
func isFlat(d Discoverer) bool {
	f, ok := d.(FlatRoots)
	return ok && f.FlatRoots()
}

// skipperOf returns d's SkipFolder, or nil.
func skipperOf(d Discoverer) func(string) bool {
	if s, ok := d.(FolderSkipper); ok {
		return s.SkipFolder
	}
	return nil
}

// CwdSpellings returns the ways a harness may spell the working folder
// cwd: cleaned as given and, if different, with symlinks resolved.
func CwdSpellings(cwd string) []string {
	out := []string{filepath.Clean(cwd)}
	if r, err := filepath.EvalSymlinks(cwd); err == nil && r != out[0] {
		out = append(out, r)
	}
	return out
}

// Slack returns d, or DefaultSlack when d is not positive.
func Slack(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultSlack
	}
	return d
}

// SortCandidates orders candidates oldest first (then by path).
func SortCandidates(c []Candidate) {
	sort.SliceStable(c, func(i, j int) bool {
		if !c[i].Born.Equal(c[j].Born) {
			return c[i].Born.Before(c[j].Born)
		}
		return c[i].Path < c[j].Path
	})
}

// BornAt returns the file's birth time where the file system records it
// (statx on Linux, st_birthtimespec on macOS) or else its modification
// time.
func BornAt(path string) (time.Time, bool) {
	if t, ok := birthTime(path); ok {
		return t, true
	}
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}, false
	}
	return fi.ModTime(), true
}

// FileFacts remembers each file's birth time and, when asked, what a
// polled discoverer read from a part of it that does not change once
// complete (a session file's header line), so that each file is looked
// at once per launch instead of on every scan: a folder keeps every past
// session's file. The zero value is ready; it is safe for concurrent use.
type FileFacts[T any] struct {
	mu    sync.Mutex
	known map[string]fileFact[T]
}

type fileFact[T any] struct {
	born time.Time
	v    T
	read bool // v holds what read returned
}

// Born returns path's birth time (BornAt); ok is false when path cannot
// be looked at.
func (f *FileFacts[T]) Born(path string) (time.Time, bool) {
	k, ok := f.fact(path)
	return k.born, ok
}

// Of returns path's birth time and read(path); ok is false when either
// fails (read then is asked again next time, e.g. for a line still being
// written). A birth time Born remembered is not looked up again.
func (f *FileFacts[T]) Of(path string, read func(string) (T, bool)) (born time.Time, v T, ok bool) {
	k, ok := f.fact(path)
	switch {
	case !ok:
		return time.Time{}, v, false
	case k.read:
		return k.born, k.v, true
	}
	if v, ok = read(path); !ok {
		return time.Time{}, v, false
	}
	f.mu.Lock()
	f.known[path] = fileFact[T]{born: k.born, v: v, read: true}
	f.mu.Unlock()
	return k.born, v, true
}

// fact returns what is known of path, taking its birth time first.
func (f *FileFacts[T]) fact(path string) (fileFact[T], bool) {
	f.mu.Lock()
	k, known := f.known[path]
	f.mu.Unlock()
	if known {
		return k, true
	}
	born, ok := BornAt(path)
	if !ok {
		return k, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		f.known = map[string]fileFact[T]{}
	}
	if k, known = f.known[path]; !known {
		k = fileFact[T]{born: born}
		f.known[path] = k
	}
	return k, true
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
	c, _, err := discover(ctx, cfg, nil)
	return c, err
}

// discover is Discover answering syncs (TailConfig.Syncs) meanwhile: a
// sync looks at once; when that finds no file it is answered (nothing was
// written to read), else it is returned with the file, for the caller to
// answer once the file is read.
func discover(ctx context.Context, cfg DiscoverConfig, syncs <-chan func()) (Candidate, []func(), error) {
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
		return found, nil, nil
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	// Syncs are answered on their own goroutine; try runs on both, so it
	// is serialized.
	var mu sync.Mutex
	var pending []func()
	tryOnce := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return found.Path != "" || try()
	}
	syncsDone := make(chan struct{})
	go func() {
		defer close(syncsDone)
		for {
			select {
			case <-wctx.Done():
				return
			case done := <-syncs:
				if !tryOnce() {
					done()
					continue
				}
				mu.Lock()
				pending = append(pending, done)
				mu.Unlock()
				stop()
				return
			}
		}
	}()
	dw := &DirWatcher{Roots: cfg.Discoverer.Roots(), Skip: skipperOf(cfg.Discoverer), Flat: isFlat(cfg.Discoverer), Poll: cfg.Poll, SafetyPoll: cfg.Poll, ForcePoll: cfg.ForcePoll}
	_ = dw.Run(wctx, func(TailMode, error) {}, func(string) {
		if tryOnce() {
			stop()
		}
	})
	stop()
	<-syncsDone
	if found.Path != "" {
		return found, pending, nil
	}
	for _, done := range pending {
		done()
	}
	if err := parent.Err(); err != nil {
		return Candidate{}, nil, err
	}
	detail := ""
	if lastErr != nil {
		detail = fmt.Sprintf(" (last scan error: %v)", lastErr)
	}
	return Candidate{}, nil, fmt.Errorf("%w within %s under %s%s; telemetry for this session is unavailable", ErrNotFound, within, strings.Join(cfg.Discoverer.Roots(), ", "), detail)
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
