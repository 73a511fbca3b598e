package attention

import "time"

// Attention is a session's current attention state and its provenance.
type Attention struct {
	State  State
	Since  time.Time
	Source Source
	Detail string
	// Evidence is the signal that set the state.
	Evidence string
	// Episode is the ID of the open episode, 0 when none.
	Episode int
}

// Tracker folds facts into a session's attention. Its zero value is not
// usable; create it with NewTracker. It is not safe for concurrent use.
type Tracker struct {
	cur      Attention
	turn     int
	last     time.Time
	episodes []Episode
	// lastKey is when the latest key was typed at the terminal.
	lastKey time.Time
}

// NewTracker starts in Unknown at start.
func NewTracker(start time.Time) *Tracker {
	return &Tracker{cur: Attention{State: Unknown, Since: start}, last: start}
}

// Current is the attention now.
func (t *Tracker) Current() Attention { return t.cur }

// Turn is the number of turns started so far.
func (t *Tracker) Turn() int { return t.turn }

// Episodes returns a copy of every episode so far, oldest first.
func (t *Tracker) Episodes() []Episode { return append([]Episode(nil), t.episodes...) }

// Observe folds f in and reports whether the attention changed (state,
// source or detail). A fact older than the last one is taken as observed
// at the last one's time, so episodes never run backwards.
func (t *Tracker) Observe(f Fact) bool {
	if f.At.Before(t.last) {
		f.At = t.last
	}
	t.last = f.At
	switch f.Kind {
	case TurnStarted:
		t.turn++
		if t.cur.State == StoppedOnError && !t.lastKey.IsZero() && t.cur.Since.After(t.lastKey) {
			// The start of the turn the error stopped, recorded after the
			// error's own evidence (frames from the harness's file can
			// lag): no prompt was typed since the error, so it stays.
			if t.cur.Episode != 0 {
				t.episodes[t.cur.Episode-1].Turn = t.turn
			}
			return false
		}
		return t.set(f, Working)
	case TurnEnded:
		if t.cur.State == StoppedOnError {
			return false // the turn ended on the error already shown
		}
		return t.set(f, WaitingForInput)
	case KeyTyped:
		t.lastKey = f.At
		if !t.cur.State.Blocking() {
			return false // typing a prompt, or at an error: no answer yet
		}
		return t.set(f, Working)
	case Claim:
		if f.State == "" || f.State == Unknown {
			return false
		}
		if t.cur.State.Waiting() && trust(f.Source) < standing(t.cur.Source) {
			return false // a less trusted source within the episode
		}
		return t.set(f, f.State)
	}
	return false
}

// End ends the open episode at (the session ended) and leaves the state
// Unknown: nothing is known of a session that is gone.
func (t *Tracker) End(at time.Time) {
	if at.Before(t.last) {
		at = t.last
	}
	t.last = at
	if t.cur.Episode != 0 {
		t.episodes[t.cur.Episode-1].End = at
	}
	t.cur = Attention{State: Unknown, Since: at}
}

// set moves to s on f's evidence. The same state keeps its Since and
// episode; only a more trusted source, or a detail where there was none,
// is taken.
func (t *Tracker) set(f Fact, s State) bool {
	if s == t.cur.State {
		changed := false
		if trust(f.Source) > trust(t.cur.Source) {
			t.cur.Source, t.cur.Evidence, changed = f.Source, f.Evidence, true
		}
		if f.Detail != "" && t.cur.Detail == "" {
			t.cur.Detail, changed = f.Detail, true
		}
		if changed && t.cur.Episode != 0 {
			ep := &t.episodes[t.cur.Episode-1]
			ep.Source, ep.Detail = t.cur.Source, t.cur.Detail
		}
		return changed
	}
	if t.cur.Episode != 0 {
		t.episodes[t.cur.Episode-1].End = f.At
	}
	t.cur = Attention{State: s, Since: f.At, Source: f.Source, Detail: f.Detail, Evidence: f.Evidence}
	if s.Waiting() {
		t.episodes = append(t.episodes, Episode{ID: len(t.episodes) + 1, Kind: s, Source: f.Source, Detail: f.Detail, Turn: t.turn, Start: f.At})
		t.cur.Episode = len(t.episodes)
	}
	return true
}
