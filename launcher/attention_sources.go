package launcher

import (
	"context"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/telemetry"
)

// attentionSources brings the supervisor the attention facts of the
// harness's screen (the dialog texts its adapter names, matched on the
// output stream: ptyio.ScreenWatch) and of its own files (each line the
// telemetry watcher already reads, mapped by the adapter's
// AttentionRecord), for a harness that is an adapters.AttentionReader.
// The supervisor feeds them to s.attend, as it does the hooks' facts.
type attentionSources struct {
	reader adapters.AttentionReader
	rules  []adapters.AttentionScreenRule
	facts  chan sourcedFact
}

// sourcedFact is a fact on its way to the supervisor.
type sourcedFact struct {
	fact attention.Fact
	// taken, when set, is closed once the supervisor attended it: the
	// watcher waits for it before the moments of the line's own and the
	// following lines, so a line's fact and the frames around it keep
	// their order.
	taken chan struct{}
	// synced: a screen fact that waited for the telemetry watcher to read
	// what the harness had written by then.
	synced bool
}

// screenTurnWait bounds how long a screen fact drawn after a prompt was
// typed waits for that prompt's turn to be recorded (screenTurnPoll
// apart), so that the turn's start does not end the dialog's episode.
const (
	screenTurnWait = 2 * time.Second
	screenTurnPoll = 50 * time.Millisecond
)

// screenFactsQueued bounds the screen facts waiting for the supervisor;
// one more is dropped (a dialog is drawn once per key: a handful at most).
const screenFactsQueued = 16

// newAttentionSources returns the sources of ad's harness, or nil when
// its signals tell nothing of attention.
func newAttentionSources(ad *adapters.Adapter) *attentionSources {
	if ad == nil {
		return nil
	}
	r, ok := ad.Harness().(adapters.AttentionReader)
	if !ok {
		return nil
	}
	return &attentionSources{reader: r, rules: r.AttentionScreen(), facts: make(chan sourcedFact, screenFactsQueued)}
}

// channel is where the facts arrive; nil (never ready) without sources.
func (a *attentionSources) channel() <-chan sourcedFact {
	if a == nil {
		return nil
	}
	return a.facts
}

// screenWatch returns the watch of the harness's dialog texts for its
// terminal output, or nil when it names none: then nothing is matched.
func (a *attentionSources) screenWatch() *ptyio.ScreenWatch {
	if a == nil || len(a.rules) == 0 {
		return nil
	}
	texts := make([]string, len(a.rules))
	for i, r := range a.rules {
		texts[i] = r.Text
	}
	return &ptyio.ScreenWatch{Texts: texts, Seen: a.screenSeen}
}

// screenSeen queues the claim of rule i, drawn at at. It runs on the
// output goroutine and never blocks: a full queue drops the fact.
func (a *attentionSources) screenSeen(i int, at time.Time) {
	r := a.rules[i]
	f := attention.Fact{At: at, Kind: attention.Claim, Source: attention.SourceScreen, State: r.State, Evidence: r.Evidence}
	select {
	case a.facts <- sourcedFact{fact: f}:
	default:
	}
}

// telemetry returns t with each line its parsers read also mapped by the
// harness's AttentionRecord (no second read: the line the parser is
// handed). A fact of a line written before since (a resumed
// conversation's history) is dropped; a turn boundary too (the frames
// the same lines record are the turns). The watcher hands each fact over
// and waits until the supervisor took it or ctx ends.
func (a *attentionSources) telemetry(ctx context.Context, t adapters.Telemetry, since time.Time) adapters.Telemetry {
	if a == nil || t == nil {
		return t
	}
	return recordTelemetry{Telemetry: t, a: a, ctx: ctx, since: since}
}

// recordTelemetry is a harness's telemetry whose parsers also map lines
// to attention facts.
type recordTelemetry struct {
	adapters.Telemetry
	a     *attentionSources
	ctx   context.Context
	since time.Time
}

func (r recordTelemetry) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src, err := r.Telemetry.TelemetrySource(t)
	if err != nil || src.NewParser == nil {
		return src, err
	}
	inner := src.NewParser
	src.NewParser = func() telemetry.Parser { return recordParser{Parser: inner(), r: r} }
	return src, nil
}

// recordParser is a harness's parser that hands each line to the
// harness's AttentionRecord first.
type recordParser struct {
	telemetry.Parser
	r recordTelemetry
}

func (p recordParser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	if f, ok := p.r.a.reader.AttentionRecord(line); ok && !f.Kind.Boundary() {
		if f.At.IsZero() {
			f.At = time.Now() // a line without a time of its own: read now
		}
		if !f.At.Before(p.r.since) {
			p.r.handOver(f)
		}
	}
	return p.Parser.Parse(dst, line, src)
}

// handOver gives the supervisor f and waits until it took it (or ctx
// ends: the watcher stops).
func (r recordTelemetry) handOver(f attention.Fact) {
	sf := sourcedFact{fact: f, taken: make(chan struct{})}
	select {
	case r.a.facts <- sf:
	case <-r.ctx.Done():
		return
	}
	select {
	case <-sf.taken:
	case <-r.ctx.Done():
	}
}

// attendSourced feeds a screen or transcript fact to the tracker. A
// transcript fact first takes the telemetry moments already read (the
// lines before its own), so it follows their frames. A screen fact first
// waits for the watcher to read what the harness wrote before drawing
// it (the turn's prompt, when frames come from the file: a turn started
// after the dialog would end it), then takes those moments too.
func (s *supervisor) attendSourced(sf sourcedFact) {
	switch {
	case sf.taken != nil:
		defer close(sf.taken)
		s.takeObserved()
	case sf.fact.Source == attention.SourceScreen && !sf.synced && s.obs != nil && s.cfg.Telemetry != nil:
		caughtUp := s.cfg.Telemetry.sync()
		sf.synced = true
		go func() {
			<-caughtUp
			select {
			case s.cfg.attention.facts <- sf:
			case <-s.loopDone:
			}
		}()
		return
	case sf.synced:
		s.takeObserved()
		if s.turnPending(sf.fact.At) && s.cfg.Now().Sub(sf.fact.At) < screenTurnWait {
			time.AfterFunc(screenTurnPoll, func() {
				select {
				case s.cfg.attention.facts <- sf:
				case <-s.loopDone:
				}
			})
			return
		}
	}
	s.attend(sf.fact)
}

// turnPending reports whether a prompt typed before at has not started
// its turn in the tracker yet: the session is not working and a key was
// typed since its state began (the frames of a turn can be recorded
// after the dialog it draws, when they come from the harness's file).
func (s *supervisor) turnPending(at time.Time) bool {
	if s.att.tracker == nil || s.term == nil {
		return false
	}
	s.attendKeys() // a key that answered a dialog makes it working
	cur := s.att.tracker.Current()
	k := s.term.LastKey()
	return cur.State != attention.Working && k.After(cur.Since) && !k.After(at)
}

// takeObserved records the telemetry moments waiting on the watcher's
// channel, without waiting for more. A closed channel is left to the
// loop, which sees it closed too.
func (s *supervisor) takeObserved() {
	for s.obs != nil {
		select {
		case m, ok := <-s.obs:
			if !ok {
				return
			}
			s.observed(m)
		default:
			return
		}
	}
}
