package launcher

import (
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/control"
)

// attending is what the supervisor knows of whether its session waits
// for a person (internal/attention), for a harness whose signals tell
// (adapters.AttentionReader): the hook calls the harness's reader maps,
// the turns the frames it records open and end, and the keys typed at
// its terminal. Every change is recorded at once as a supervisor.tick
// (attention_stream.go) and announced (attention_notify.go); status
// reports it, and a renewal between turns is refused while a dialog is
// open. Keys are read from the terminal when a fact arrives, the state is
// asked for or the regular activity check runs, so waiting costs no
// wake-up.
type attending struct {
	tracker *attention.Tracker
	// keySeen is the latest key fed to the tracker.
	keySeen time.Time
	// notice is what the notifiers were told (attention_notify.go).
	notice noticing
}

// attentionReader returns the session's harness's attention reader, or
// nil.
func (s *supervisor) attentionReader() adapters.AttentionReader {
	if s.cfg.Adapter == nil {
		return nil
	}
	r, _ := s.cfg.Adapter.Harness().(adapters.AttentionReader)
	return r
}

// attend feeds fact f to the session's tracker, after the keys typed
// before it.
func (s *supervisor) attend(f attention.Fact) {
	if !s.attendFrom(f.At) {
		return
	}
	s.attendKeys()
	s.observeAttention(f)
}

// attendFrom starts the tracker at at, if the harness's signals tell
// anything and it has not started yet, and reports whether it runs.
func (s *supervisor) attendFrom(at time.Time) bool {
	if s.att.tracker == nil && s.attentionReader() != nil {
		s.att.tracker = attention.NewTracker(at)
	}
	return s.att.tracker != nil
}

// attendKeys feeds the tracker the latest key typed at the terminal, if
// it is new: an answer to an open dialog.
func (s *supervisor) attendKeys() {
	if s.att.tracker == nil || s.term == nil {
		return
	}
	k := s.term.LastKey()
	if k.IsZero() || !k.After(s.att.keySeen) {
		return
	}
	s.att.keySeen = k
	s.observeAttention(attention.Fact{At: k, Kind: attention.KeyTyped, Source: attention.SourceFrame, Evidence: "key"})
}

// attendHook feeds one hook call's input to the tracker. A turn boundary
// is left to the frames the same hook records (attendRecorded).
func (s *supervisor) attendHook(input []byte) {
	r := s.attentionReader()
	if r == nil {
		return
	}
	if f, ok := r.AttentionEvent(input, s.cfg.Now()); ok && !f.Kind.Boundary() {
		s.attend(f)
	}
}

// attendRecorded feeds a recorded receipt's turn boundary to the
// tracker: a turn's first frame.opening or frame.opened (newTurn: its id
// is not the latest turn's) starts a turn, its frame.ended ends it. (The
// session.ended ended what is known before it was recorded:
// attentionOnReceipt.)
func (s *supervisor) attendRecorded(m Moment, newTurn bool, at time.Time) {
	if !s.attendFrom(at) {
		return
	}
	if m.Frame == nil || !isTurn(*m.Frame) {
		return
	}
	f := attention.Fact{At: at, Source: attention.SourceFrame, Evidence: string(m.Event)}
	switch {
	case newTurn && (m.Event == contract.EventFrameOpening || m.Event == contract.EventFrameOpened):
		f.Kind = attention.TurnStarted
	case m.Event == contract.EventFrameEnded:
		f.Kind = attention.TurnEnded
	default:
		return
	}
	s.attend(f)
}

// attentionNow is the session's attention now (keys typed so far
// included), or nil when its harness's signals tell nothing.
func (s *supervisor) attentionNow() *control.Attention {
	if s.att.tracker == nil {
		return nil
	}
	s.attendKeys()
	cur, now := s.att.tracker.Current(), s.cfg.Now()
	waited, _ := attention.Waited(s.att.tracker.Episodes(), now)
	b := attention.BlockOf(s.att.tracker, now, nil)
	a := &control.Attention{State: string(cur.State), Since: cur.Since, Source: string(cur.Source), Detail: cur.Detail,
		WaitedSeconds: roundMillis(waited.Seconds()), SinceEpochMs: b.Since, Evidence: b.Evidence, Episode: b.Episode, Turn: b.Turn}
	for k, ms := range b.WaitedMs {
		if a.WaitedMs == nil {
			a.WaitedMs = map[string]int64{}
		}
		a.WaitedMs[string(k)] = ms
	}
	return a
}

// dialogOpen reports whether the session waits for a person in the
// middle of a turn (attention.State.Blocking), and in which state.
func (s *supervisor) dialogOpen() (attention.State, bool) {
	if s.att.tracker == nil {
		return "", false
	}
	s.attendKeys()
	st := s.att.tracker.Current().State
	return st, st.Blocking()
}
