package telemetry

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DirWatcher watches folder trees for new or changed files. Subfolders
// are added as they appear (a harness may write dated subfolders), and a root
// that does not exist yet is picked up when it is created. When fsnotify
// is unavailable it falls back to polling.
//
// DirWatcher only says "look again": the notify callback gets the changed
// path, or "" on a poll tick, and the caller re-scans.
type DirWatcher struct {
	// Roots are the folders to watch, recursively.
	Roots []string
	// Skip, when set, names folders below a root that are neither
	// watched nor listed, with all under them (FolderSkipper).
	Skip func(dir string) bool
	// Flat watches each root alone, never listing it nor any folder
	// below it (FlatRoots).
	Flat bool
	// Poll is the polling interval in poll mode (default 250ms); in
	// fsnotify mode the callback also runs every SafetyPoll (default 2s).
	Poll, SafetyPoll time.Duration
	// ForcePoll disables fsnotify.
	ForcePoll bool

	w       *fsnotify.Watcher
	watched map[string]bool
}

// Run watches until ctx is cancelled, calling notify from the calling
// goroutine. mode is called once with the mode in use and, in poll mode,
// the reason fsnotify could not be used (nil when ForcePoll). Run returns
// nil on cancellation.
func (d *DirWatcher) Run(ctx context.Context, mode func(TailMode, error), notify func(path string)) error {
	if d.Poll <= 0 {
		d.Poll = DefaultPoll
	}
	if d.SafetyPoll <= 0 {
		d.SafetyPoll = DefaultSafetyPoll
	}
	interval := d.Poll
	var events <-chan fsnotify.Event
	var errs <-chan error
	if !d.ForcePoll {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			d.w = w
			d.watched = make(map[string]bool)
			defer func() { _ = w.Close() }()
			d.addAll()
			events, errs = w.Events, w.Errors
			interval = d.SafetyPoll
			mode(ModeNotify, nil)
		} else {
			mode(ModePoll, err)
		}
	} else {
		mode(ModePoll, nil)
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if ev.Has(fsnotify.Create) {
				if fi, err := os.Stat(ev.Name); err == nil && fi.IsDir() {
					d.addAll() // the new folder, and anything made in it already
				}
			}
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				delete(d.watched, ev.Name)
			}
			notify(ev.Name)
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			d.addAll()
			notify("")
		case <-ticker.C:
			if d.w != nil {
				d.addAll() // roots that appeared without an event we saw
			}
			notify("")
		}
	}
}

// addAll adds every existing folder under each root (the root alone when
// Flat), or the nearest existing ancestor of a root that does not exist
// yet.
func (d *DirWatcher) addAll() {
	for _, root := range d.Roots {
		root = filepath.Clean(root)
		if _, err := os.Stat(root); err != nil {
			d.add(nearestAncestor(root))
			continue
		}
		if d.Flat {
			d.add(root)
			continue
		}
		_ = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p == root {
					return err
				}
				return fs.SkipDir
			}
			if !e.IsDir() {
				return nil
			}
			if p != root && d.Skip != nil && d.Skip(p) {
				return fs.SkipDir
			}
			d.add(p)
			return nil
		})
	}
}

func (d *DirWatcher) add(p string) {
	if p == "" || d.watched[p] {
		return
	}
	if err := d.w.Add(p); err == nil {
		d.watched[p] = true
	}
}

func nearestAncestor(p string) string {
	for {
		parent := filepath.Dir(p)
		if parent == p {
			return ""
		}
		p = parent
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return p
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return ""
		}
	}
}
