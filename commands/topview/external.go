package topview

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// External marks a row as a session lifeloop did not start and does not
// supervise: a harness runs it of its own accord (a background session
// of its service) and lists it, read-only (adapters.ExternalLister). Such
// a row has no receipts, frames, pressure or renewals, and top's keys do
// not act on it.
type External struct {
	// Source is where the row was read from (the harness's command).
	Source string `json:"source"`
	// Name is the session's title, when the harness gave it one.
	Name string `json:"name,omitempty"`
	// Status is the harness's word for what the session does (e.g. busy,
	// idle, waiting), WaitingFor what it waits for, when it says.
	Status     string `json:"status,omitempty"`
	WaitingFor string `json:"waiting_for,omitempty"`
	// Attach is the harness's command that opens the session, or "".
	Attach string `json:"attach,omitempty"`
}

// ExternalBound is how long top waits for a harness to list the
// sessions it runs of its own accord. The live view looks at the
// harnesses' stamps (adapters.ExternalLister.ExternalStamp) every
// ExternalCheck and asks again when one changed, or when the last
// listing is ExternalRefresh old.
const (
	ExternalBound   = 5 * time.Second
	ExternalCheck   = 2 * time.Second
	ExternalRefresh = time.Minute
)

// FromExternal is a session harness runs that lifeloop did not start,
// as top shows it: the harness's own id (what its commands take) as the
// row's id, its state, pid, folder and start as the harness says them,
// its status as the activity, and "unsupervised" with the source as
// the last event.
func FromExternal(harness string, s adapters.ExternalSession) Row {
	r := Row{
		ID: s.ID, Harness: harness, HarnessSessionID: s.SessionID, State: s.State,
		Cwd: s.Cwd, Pid: s.Pid, Activity: s.Status,
		External: &External{Source: s.Source, Name: s.Name, Status: s.Status, WaitingFor: s.WaitingFor, Attach: s.Attach},
	}
	if r.State == "" {
		r.State = "running"
	}
	if !s.StartedAt.IsZero() {
		at := s.StartedAt
		r.StartedAt = &at
	}
	r.LastEvent = "unsupervised (" + s.Source + ")"
	if s.WaitingFor != "" {
		r.LastEvent += " · waits for " + s.WaitingFor
	}
	return r
}

// MergeExternal returns rows with the sessions of ext that are not
// already among them, in top's order (SortRows): a session lifeloop
// records (a background session lifeloop's process wrapper ran) is
// listed once, as lifeloop's row, whether its harness session id or
// (while it runs) its pid match.
func MergeExternal(rows, ext []Row) []Row {
	if len(ext) == 0 {
		return rows
	}
	sessions, pids := map[string]bool{}, map[int]bool{}
	for _, r := range rows {
		if r.External != nil {
			continue
		}
		if r.HarnessSessionID != "" {
			sessions[r.HarnessSessionID] = true
		}
		if r.Pid > 0 && !r.Ended() {
			pids[r.Pid] = true
		}
	}
	out := append(make([]Row, 0, len(rows)+len(ext)), rows...)
	for _, x := range ext {
		if (x.HarnessSessionID != "" && sessions[x.HarnessSessionID]) || (x.Pid > 0 && pids[x.Pid]) {
			continue
		}
		out = append(out, x)
	}
	SortRows(out)
	return out
}

// ExternalSource is every harness of Registry that lists the sessions
// it runs of its own accord, asked for a person whose environment is
// Env, each within Bound (0: ExternalBound).
type ExternalSource struct {
	Registry *adapters.Registry
	Env      []string
	Bound    time.Duration
}

// Stamp is the harnesses' stamps together: the same stamp, the same
// listing (adapters.ExternalLister.ExternalStamp). It runs nothing.
func (x ExternalSource) Stamp() string {
	var s string
	for _, a := range x.Registry.All() {
		if l := a.ExternalLister(); l != nil {
			s += a.ID + "\n" + l.ExternalStamp(x.Env)
		}
	}
	return s
}

// List asks the harnesses together and returns their rows, in top's
// order, and one error per harness that did not answer.
func (x ExternalSource) List(ctx context.Context) ([]Row, []error) {
	var (
		mu   sync.Mutex
		rows []Row
		errs []error
		wg   sync.WaitGroup
	)
	bound := x.Bound
	if bound <= 0 {
		bound = ExternalBound
	}
	env := x.Env
	for _, a := range x.Registry.All() {
		l := a.ExternalLister()
		if l == nil {
			continue
		}
		wg.Go(func() { // ends within bound
			lctx, cancel := context.WithTimeout(ctx, bound)
			defer cancel()
			ss, err := l.ListExternal(lctx, env)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", a.ID, err))
			}
			for _, s := range ss {
				rows = append(rows, FromExternal(a.ID, s))
			}
		})
	}
	wg.Wait()
	SortRows(rows)
	return rows, errs
}

// Watcher is a source of rows kept current (top.RowSource).
type Watcher interface {
	Rows() []Row
	Watch(ctx context.Context, coalesce time.Duration, changed func()) error
}

// ExternalLister is what ExternalRows asks (ExternalSource).
type ExternalLister interface {
	// Stamp is cheap, and changes when List's answer may have.
	Stamp() string
	List(ctx context.Context) ([]Row, []error)
}

// ExternalRows is a source of rows (base's) with the sessions harnesses
// run of their own accord merged in (MergeExternal). While Watch runs,
// the lister is asked when Watch starts, then whenever its stamp (looked
// at every check) has changed, and at least every refresh; off the
// view's path, so a slow harness never holds a redraw. Rows returns the
// last answer.
type ExternalRows struct {
	base           Watcher
	list           ExternalLister
	check, refresh time.Duration

	mu  sync.Mutex
	ext []Row
}

// WithExternal returns base with list's rows merged in, its stamp looked
// at every check and its rows asked again when it changed or at least
// every refresh.
func WithExternal(base Watcher, list ExternalLister, check, refresh time.Duration) *ExternalRows {
	return &ExternalRows{base: base, list: list, check: check, refresh: refresh}
}

// Rows returns base's rows and the last listed ones not among them.
func (x *ExternalRows) Rows() []Row {
	x.mu.Lock()
	ext := x.ext
	x.mu.Unlock()
	return MergeExternal(x.base.Rows(), ext)
}

// Problems are base's (a state directory's unreadable sessions), if it
// has any.
func (x *ExternalRows) Problems() map[string]string {
	if p, ok := x.base.(interface{ Problems() map[string]string }); ok {
		return p.Problems()
	}
	return nil
}

// Watch runs base's Watch and the listing together until ctx ends,
// calling changed (from either's goroutine) when base's rows changed
// and when a listing differs from the last. It returns base's error.
func (x *ExternalRows) Watch(ctx context.Context, coalesce time.Duration, changed func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() { // ends with ctx
		defer close(done)
		x.poll(ctx, changed)
	}()
	err := x.base.Watch(ctx, coalesce, changed)
	cancel()
	<-done
	return err
}

func (x *ExternalRows) poll(ctx context.Context, changed func()) {
	t := time.NewTimer(0)
	defer t.Stop()
	var stamp string
	var asked time.Time
	for first := true; ; first = false {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(x.check)
		now := x.list.Stamp()
		if !first && now == stamp && time.Since(asked) < x.refresh {
			continue
		}
		stamp, asked = now, time.Now()
		rows, _ := x.list.List(ctx) // a harness that does not answer lists none until it does
		if ctx.Err() != nil {
			return
		}
		x.mu.Lock()
		same := sameRows(x.ext, rows)
		x.ext = rows
		x.mu.Unlock()
		if !same {
			changed()
		}
	}
}

// sameRows reports whether two listings show the same: the same
// sessions in the same state, status and wait.
func sameRows(a, b []Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.ID != y.ID || x.Pid != y.Pid || x.State != y.State || x.Activity != y.Activity || x.LastEvent != y.LastEvent {
			return false
		}
	}
	return true
}
