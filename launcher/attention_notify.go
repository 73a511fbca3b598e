package launcher

import (
	"time"

	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/notify"
)

// typingQuiet is how long the terminal must have had no key before an
// episode is announced: never while the person is typing in that
// session's terminal.
const typingQuiet = 2 * time.Second

// noticing is what the notifiers were told of the session's episodes.
// One episode is open at a time, so one waits for the typing to stop and
// one was announced.
type noticing struct {
	// pending is the open episode whose announcement waits for the
	// terminal to be quiet (0: none).
	pending int
	// announced is the latest episode Opened was called for.
	announced int
	// evidence is the open episode's latest evidence (the Episode keeps
	// none).
	evidence string
}

// noticeChange tells the notifiers of a change of attention from before
// to the tracker's current state: the episode it closed (if it was
// announced), the episode it opened (at once, or once the typing stops).
func (s *supervisor) noticeChange(before attention.Attention, closed *attention.Episode) {
	cur := s.att.tracker.Current()
	if closed != nil {
		if closed.ID == s.att.notice.announced {
			s.notifier.Closed(s.episodeNotice(*closed, s.att.notice.evidence))
		}
		if closed.ID == s.att.notice.pending {
			s.att.notice.pending = 0 // closed before it was announced: dropped
		}
	}
	if cur.Episode == 0 {
		return
	}
	s.att.notice.evidence = cur.Evidence
	if cur.Episode != before.Episode {
		s.att.notice.pending = cur.Episode
		s.noticePending()
	}
}

// noticePending announces the episode that waits for the terminal to be
// quiet, once no key was typed for typingQuiet, or drops it when it
// closed meanwhile. The regular activity check calls it: no timer of
// its own.
func (s *supervisor) noticePending() {
	id := s.att.notice.pending
	if id == 0 || s.att.tracker == nil {
		return
	}
	if s.att.tracker.Current().Episode != id {
		s.att.notice.pending = 0
		return
	}
	if s.term != nil {
		if k := s.term.LastKey(); !k.IsZero() && s.cfg.Now().Sub(k) < typingQuiet {
			return
		}
	}
	s.att.notice.pending = 0
	s.att.notice.announced = id
	e := s.att.tracker.Episodes()[id-1]
	s.notifier.Opened(s.episodeNotice(e, s.att.notice.evidence))
}

// episodeNotice is episode e of the session as the notifiers tell it:
// the same values the stream's block carries.
func (s *supervisor) episodeNotice(e attention.Episode, evidence string) notify.Episode {
	n := notify.Episode{Session: s.rec.ID, Harness: s.rec.AdapterID, Cwd: s.rec.Cwd,
		ID: e.ID, Kind: string(e.Kind), Source: string(e.Source), Evidence: evidence, Detail: e.Detail,
		Turn: e.Turn, Since: e.Start}
	if !e.Open() {
		n.End, n.Duration = e.End, e.Duration(e.End)
	}
	return n
}

// attentionCheck is the attention's part of the regular activity check:
// a key typed since (an answer to an open dialog) and an announcement
// that waited for the typing to stop.
func (s *supervisor) attentionCheck() {
	if s.att.tracker == nil {
		return
	}
	s.attendKeys()
	s.noticePending()
}
