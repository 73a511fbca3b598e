package topview

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// Source keeps one Row per session of a state directory current. It
// reads each file once when it opens, then only what changes: fsnotify
// watches the sessions folder (new and removed sessions) and the folder
// of every session not yet ended (session.json rewritten, receipts
// appended to the ledger, renewal.json rewritten), and a ledger is read
// from the sequence it had reached (ledger.ReadSince), never from the
// start again. renewal.json and a policy client's autorenew.json are
// reread together when either changes. No file is polled; only the wrapper locks of the sessions
// not yet ended are tried every LivenessEvery (a wrapper's death changes
// no file), and a session whose wrapper is gone is sealed.
type Source struct {
	root string
	// skipBefore: sessions that ended before it are left out unread.
	skipBefore time.Time
	// seal, when set, seals a session whose wrapper is gone and returns
	// its record as sealed (see package seal).
	seal func(statedir.SessionRecord) statedir.SessionRecord

	mu       sync.Mutex
	sessions map[string]*tracked
	problems map[string]string
}

type tracked struct {
	s       session
	known   bool // session.json has been read
	old     bool // ended before skipBefore: left out, ledger unread
	watched bool
}

// Open reads every session under root. It creates root and its sessions
// folder when missing (0700), so that they can be watched.
func Open(root string) (*Source, error) { return OpenSince(root, time.Time{}) }

// OpenSince is Open leaving out the sessions that ended before since:
// only their session.json is read, not their ledger, so a long history
// costs nothing at start-up.
func OpenSince(root string, since time.Time) (*Source, error) { return OpenWith(root, since, nil) }

// LivenessEvery is how often Watch tries the wrapper locks of the
// sessions not yet ended.
const LivenessEvery = 2 * time.Second

// OpenWith is OpenSince with a sealer: a session not ended whose wrapper
// is gone is handed to sealer, and shown as it returns it.
func OpenWith(root string, since time.Time, sealer func(statedir.SessionRecord) statedir.SessionRecord) (*Source, error) {
	if err := statedir.Ensure(root); err != nil {
		return nil, err
	}
	if err := statedir.Ensure(statedir.SessionsDir(root)); err != nil {
		return nil, err
	}
	s := &Source{root: root, skipBefore: since, seal: sealer, sessions: map[string]*tracked{}, problems: map[string]string{}}
	entries, err := os.ReadDir(statedir.SessionsDir(root))
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() && statedir.ValidateSessionID(e.Name()) == nil {
			s.refresh(e.Name(), true, true, true)
		}
	}
	return s, nil
}

// Root is the state directory.
func (s *Source) Root() string { return s.root }

// Rows returns a copy of every known session in SortRows's order.
func (s *Source) Rows() []Row {
	s.mu.Lock()
	defer s.mu.Unlock()
	rows := make([]Row, 0, len(s.sessions))
	for _, t := range s.sessions {
		if t.known && !t.old {
			rows = append(rows, t.s.row())
		}
	}
	SortRows(rows)
	return rows
}

// Problems returns the sessions whose files could not be read, by id.
func (s *Source) Problems() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.problems))
	for k, v := range s.problems {
		out[k] = v
	}
	return out
}

// SortRows orders rows as top shows them: sessions not ended first,
// those that need a person first among them (attentionBefore), then
// newest first.
func SortRows(rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Ended() != b.Ended() {
			return !a.Ended()
		}
		if before, ok := attentionBefore(a, b); ok {
			return before
		}
		ta, tb := startOf(a), startOf(b)
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
		return a.ID > b.ID
	})
}

func startOf(r Row) time.Time {
	if r.StartedAt != nil {
		return *r.StartedAt
	}
	return time.Time{}
}

// refresh rereads what changed of session id: its record, its ledger
// from where it was, its renewal status.
func (s *Source) refresh(id string, record, receipts, renewalStatus bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.sessions[id]
	if t == nil {
		t = &tracked{}
		s.sessions[id] = t
	}
	if record {
		rec, err := statedir.ReadSession(s.root, id)
		switch {
		case errors.Is(err, statedir.ErrSessionNotFound):
			// The folder comes before its record; its Create event follows.
		case err != nil:
			s.problems[id] = err.Error()
		default:
			if s.seal != nil && !rec.State.IsTerminal() && statedir.WrapperGone(s.root, id) {
				rec = s.seal(rec)
			}
			delete(s.problems, id)
			t.s.setRecord(rec)
			t.known = true
			t.old = rec.State.IsTerminal() && rec.EndedAt != nil && rec.EndedAt.Before(s.skipBefore)
		}
	}
	if t.old {
		return
	}
	if receipts {
		for e, err := range ledger.ReadSince(statedir.ReceiptsPath(s.root, id), t.s.sum.LastSequence) {
			if err != nil {
				continue // a line that is not a receipt; `ledger verify` reports it
			}
			t.s.apply(e)
		}
	}
	if renewalStatus {
		if st, err := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(s.root, id))); err == nil {
			t.s.sum.SetRenewal(st)
		}
		if ar, err := sessionview.ReadAutorenew(statedir.SessionDir(s.root, id)); err == nil {
			t.s.sum.SetAutorenew(ar)
		}
	}
}

// Watch keeps the rows current until ctx is cancelled, calling changed
// (from Watch's goroutine) after each burst of changes, at most once per
// coalesce interval. It returns nil when ctx ends.
func (s *Source) Watch(ctx context.Context, coalesce time.Duration, changed func()) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch %s: %w", s.root, err)
	}
	defer func() { _ = w.Close() }()
	sessionsDir := statedir.SessionsDir(s.root)
	if err := w.Add(sessionsDir); err != nil {
		return fmt.Errorf("watch %s: %w", sessionsDir, err)
	}
	s.watchLive(w)
	// Changes between Open and the watches being set up.
	s.rescan()
	changed()

	var timer *time.Timer
	var fire <-chan time.Time
	var liveness <-chan time.Time
	if s.seal != nil {
		tk := time.NewTicker(LivenessEvery)
		defer tk.Stop()
		liveness = tk.C
	}
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return nil
		case <-liveness:
			if s.sealLost() {
				changed()
			}
		case <-fire:
			fire = nil
			s.watchLive(w)
			changed()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				s.rescan() // events were dropped: read everything again
				break
			}
			return fmt.Errorf("watch %s: %w", s.root, err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !s.handle(w, sessionsDir, ev) {
				break
			}
			if fire == nil {
				if timer == nil {
					timer = time.NewTimer(coalesce)
				} else {
					timer.Reset(coalesce)
				}
				fire = timer.C
			}
		}
	}
}

// sealLost refreshes (and so seals) every session not ended whose
// wrapper is gone, and reports whether there was one.
func (s *Source) sealLost() bool {
	s.mu.Lock()
	var lost []string
	for id, t := range s.sessions {
		if t.known && !t.s.sum.Terminal && statedir.WrapperGone(s.root, id) {
			lost = append(lost, id)
		}
	}
	s.mu.Unlock()
	for _, id := range lost {
		s.refresh(id, true, true, false)
	}
	return len(lost) > 0
}

// handle applies one fsnotify event and reports whether a row may have
// changed.
func (s *Source) handle(w *fsnotify.Watcher, sessionsDir string, ev fsnotify.Event) bool {
	dir, base := filepath.Split(ev.Name)
	dir = filepath.Clean(dir)
	if dir == sessionsDir {
		if statedir.ValidateSessionID(base) != nil {
			return false
		}
		if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
			s.mu.Lock()
			delete(s.sessions, base)
			delete(s.problems, base)
			s.mu.Unlock()
			return true
		}
		if ev.Has(fsnotify.Create) {
			_ = w.Add(ev.Name) // before reading, so nothing written after is missed
			s.mu.Lock()
			if t := s.sessions[base]; t != nil {
				t.watched = true
			} else {
				s.sessions[base] = &tracked{watched: true}
			}
			s.mu.Unlock()
			s.refresh(base, true, true, true)
			return true
		}
		return false
	}
	if filepath.Dir(dir) != sessionsDir {
		return false
	}
	id := filepath.Base(dir)
	if ev.Op == fsnotify.Chmod {
		return false
	}
	switch base {
	case statedir.SessionFile:
		// A record that turns terminal is written after the last receipts:
		// read those too before the folder stops being watched.
		s.refresh(id, true, true, false)
	case statedir.ReceiptsFile:
		s.refresh(id, false, true, false)
	case renewal.StatusFile, autorenew.StateFile:
		s.refresh(id, false, false, true)
	default:
		return false
	}
	return true
}

// watchLive watches the folder of every session not yet ended and stops
// watching those that ended (an ended session's files no longer change).
func (s *Source) watchLive(w *fsnotify.Watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, t := range s.sessions {
		dir := statedir.SessionDir(s.root, id)
		live := !t.known || !t.s.sum.Terminal
		switch {
		case live && !t.watched:
			if w.Add(dir) == nil {
				t.watched = true
			}
		case !live && t.watched:
			_ = w.Remove(dir)
			t.watched = false
		}
	}
}

// rescan reads the sessions folder again: new sessions are added, gone
// ones dropped, and every live one brought up to date.
func (s *Source) rescan() {
	entries, err := os.ReadDir(statedir.SessionsDir(s.root))
	if err != nil {
		return
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || statedir.ValidateSessionID(e.Name()) != nil {
			continue
		}
		seen[e.Name()] = true
		s.mu.Lock()
		t := s.sessions[e.Name()]
		stale := t == nil || !t.known || !t.s.sum.Terminal
		s.mu.Unlock()
		if stale {
			s.refresh(e.Name(), true, true, true)
		}
	}
	s.mu.Lock()
	for id := range s.sessions {
		if !seen[id] {
			delete(s.sessions, id)
			delete(s.problems, id)
		}
	}
	s.mu.Unlock()
}
