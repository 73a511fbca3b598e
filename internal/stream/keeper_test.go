package stream

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// story drives a keeper through its door, as its callers do: each step
// is a fact (Driver.Step), and the recorded stream is kept as lines
// "event frame source parent".
type story struct {
	t     *testing.T
	d     *Driver[string]
	now   time.Time
	n     int
	lines []string
	byID  map[string]string // receipt id → event
}

func newStory(t *testing.T, cfg Config) *story {
	if cfg.Manifest.LifecycleEvents == nil {
		cfg.Manifest = allDeclared()
	}
	if cfg.Mode == "" {
		cfg.Mode = contract.ModeLauncherWrapper
	}
	if cfg.BindWait == 0 {
		cfg.BindWait = 10 * time.Second
	}
	s := &story{t: t, now: time.Unix(1000, 0), byID: map[string]string{}}
	s.d = NewDriver(cfg, s.record, Callbacks{})
	return s
}

func (s *story) record(m Moment, _ bool) (string, string, error) {
	s.n++
	id := fmt.Sprintf("r%d", s.n)
	parent := "-"
	if m.Parent != nil {
		parent = s.byID[*m.Parent]
	}
	frame := "-"
	if m.Frame != nil {
		frame = m.Frame.FrameID
	}
	src, _ := m.Summary["source"].(string)
	if src == "" {
		src = "-"
	}
	line := fmt.Sprintf("%s %s %s %s", m.Event, frame, src, parent)
	if m.HarnessSessionID != "" {
		line += " hs=" + m.HarnessSessionID
	}
	s.lines = append(s.lines, line)
	s.byID[id] = string(m.Event) + "@" + frame
	return id, id, nil
}

// one is an offer's answer as a list.
func one(r release, ok bool) []release {
	if !ok {
		return nil
	}
	return []release{r}
}

// step is one thing that happens to the keeper.
type step func(s *story)

// fact steps f at the story's time, then the time's passing.
func (s *story) fact(f Fact) {
	f.Now, f.TranscriptOpen = s.now, true
	s.d.Step(f)
	s.d.Step(Fact{Kind: Due, Now: s.now})
}

func wrapper(ev contract.Event) step {
	return func(s *story) {
		s.fact(Fact{Kind: Own, Moment: Moment{Event: ev, Summary: map[string]any{"source": "wrapper"}}})
	}
}

func started(payloadsWaitHook bool) step {
	return func(s *story) {
		s.fact(Fact{Kind: Started, PayloadsWaitHook: payloadsWaitHook, Moment: Moment{Event: contract.EventSessionStarted, Summary: map[string]any{"source": "wrapper"}}})
	}
}

func transcript(ev contract.Event, frame, hs string) step {
	return func(s *story) {
		m := Moment{Event: ev, HarnessSessionID: hs, Summary: map[string]any{"source": "transcript"}}
		if frame != "" {
			m.Frame = &contract.FrameContext{FrameID: frame, FrameClass: contract.FrameTopLevel}
		}
		s.fact(Fact{Kind: Transcript, Moment: m})
	}
}

func hook(ev contract.Event, frame, hs string) step {
	return func(s *story) {
		s.fact(Fact{Kind: HookCall})
		m := Moment{Event: ev, HarnessSessionID: hs, Summary: map[string]any{"source": "hook"}}
		if frame != "" {
			m.Frame = &contract.FrameContext{FrameID: frame, FrameClass: contract.FrameTopLevel}
		}
		if ev == contract.EventSessionStarted {
			// A session-start hook takes the held receipt over.
			s.fact(Fact{Kind: Placing, Moment: m})
			return
		}
		s.fact(Fact{Kind: Hook, Moment: m})
	}
}

// hookCall is a hook call that reports nothing the story records.
func hookCall() step {
	return func(s *story) { s.fact(Fact{Kind: HookCall}) }
}

func wait(d time.Duration) step {
	return func(s *story) { s.now = s.now.Add(d); s.fact(Fact{Kind: Due}) }
}

// flush is the drain's end: the transcript read to its end, nothing
// more to come.
func flush() step { return func(s *story) { s.fact(Fact{Kind: Drained}) } }

// readToEnd is the drain's read of the transcript to its end.
func readToEnd() step { return flush() }

func relaunch(resumed bool) step {
	return func(s *story) {
		s.fact(Fact{Kind: Renewal, Resumed: resumed, Moment: Moment{Event: contract.EventSessionStarting, Summary: map[string]any{"source": "renewal"}}})
	}
}

func holds(want ...string) step {
	return func(s *story) {
		var got []string
		for _, h := range s.d.Holds() {
			left := "-"
			if !h.Until.IsZero() {
				left = h.Until.Sub(s.now).String()
			}
			got = append(got, fmt.Sprintf("%s: %s (%s)", h.Event, h.Reason, left))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			s.t.Errorf("holds:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

const (
	starting = contract.EventSessionStarting
	startedE = contract.EventSessionStarted
	opening  = contract.EventFrameOpening
	opened   = contract.EventFrameOpened
	ending   = contract.EventFrameEnding
	ended    = contract.EventFrameEnded
	sEnded   = contract.EventSessionEnded
	sEnding  = contract.EventSessionEnding
	tick     = contract.EventSupervisorTick
	pressure = contract.EventContextPressureObserved
)

// TestStreamRules: the contract's stream rules as the keeper keeps them,
// one story each: who reports what, when, and the stream recorded
// (event, frame, source, the receipt it links to, the harness session).
func TestStreamRules(t *testing.T) {
	bridged := map[contract.Event]bool{ended: true}
	for _, tc := range []struct {
		name  string
		cfg   Config
		steps []step
		want  []string
	}{
		{
			name:  "native wins: the hook's report replaces the transcript's, which it carries",
			cfg:   Config{Bridged: bridged},
			steps: []step{wrapper(starting), started(false), transcript(opening, "f1", ""), transcript(ended, "f1", ""), hook(ended, "f1", ""), flush()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"frame.opening f1 transcript session.started@-",
				"frame.opened f1 inferred frame.opening@f1", "frame.ending f1 inferred frame.opening@f1",
				"frame.ended f1 hook frame.opening@f1",
			},
		},
		{
			name:  "native wins: no hook within the window, the transcript's report is recorded; a late hook is dropped",
			cfg:   Config{Bridged: bridged},
			steps: []step{wrapper(starting), started(false), transcript(ended, "f1", ""), transcript(pressure, "", ""), wait(NativeWindow), hook(ended, "f1", "")},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"frame.opening f1 inferred session.started@-", "frame.opened f1 inferred frame.opening@f1",
				"frame.ending f1 inferred frame.opening@f1", "frame.ended f1 transcript frame.opening@f1",
				"context.pressure_observed - transcript session.started@-",
			},
		},
		{
			name: "native wins from a bridge that is behind, not gone: the transcript's report waits BridgeQuiet after the bridge's last call",
			cfg:  Config{Bridged: bridged},
			steps: []step{wrapper(starting), started(false), hookCall(), wait(3 * time.Second), transcript(ended, "f1", ""),
				holds("frame.ended: waiting for the hook's report of the same moment (7s)"),
				wait(4 * time.Second), hookCall(), holds("frame.ended: waiting for the hook's report of the same moment (10s)"),
				wait(8 * time.Second), hook(ended, "f1", ""), flush()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"frame.opening f1 inferred session.started@-", "frame.opened f1 inferred frame.opening@f1",
				"frame.ending f1 inferred frame.opening@f1", "frame.ended f1 hook frame.opening@f1",
			},
		},
		{
			name: "a bridge that keeps calling without reporting the moment holds it NativeWaitMax at most",
			cfg:  Config{Bridged: bridged},
			steps: []step{wrapper(starting), started(false), transcript(ended, "f1", ""),
				wait(4 * time.Second), hookCall(), wait(4 * time.Second), hookCall(), wait(4 * time.Second), hookCall(),
				wait(4 * time.Second), hookCall(), wait(3 * time.Second), hookCall(),
				holds("frame.ended: waiting for the hook's report of the same moment (1s)"), wait(time.Second), holds()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"frame.opening f1 inferred session.started@-", "frame.opened f1 inferred frame.opening@f1",
				"frame.ending f1 inferred frame.opening@f1", "frame.ended f1 transcript frame.opening@f1",
			},
		},
		{
			name:  "a hook's later stage waits for the transcript's earlier ones",
			cfg:   Config{Bridged: bridged},
			steps: []step{wrapper(starting), started(false), hook(ending, "f1", ""), transcript(opening, "f1", ""), transcript(opened, "f1", ""), transcript(ending, "f1", "")},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"frame.opening f1 transcript session.started@-", "frame.opened f1 transcript frame.opening@f1",
				"frame.ending f1 hook frame.opening@f1",
			},
		},
		{
			name:  "inferred stages: only those the manifest declares",
			cfg:   Config{Manifest: declaredOnly(opening, ended)},
			steps: []step{wrapper(starting), started(false), transcript(ended, "f1", "")},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"frame.opening f1 inferred session.started@-", "frame.ended f1 transcript frame.opening@f1",
			},
		},
		{
			name: "held session.started: the transcript names the session",
			cfg:  Config{Transcript: true},
			steps: []step{wrapper(starting), started(false), holds("session.started: waiting for the harness to name its session (10s)"),
				wrapper(contract.EventSupervisorTick), wait(3 * time.Second),
				holds("session.started: waiting for the harness to name its session (7s)", "supervisor.tick: behind the moments held before it (-)"),
				transcript(startedE, "", "hs-1"), holds()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs-1",
				"supervisor.tick - wrapper session.started@- hs=hs-1",
			},
		},
		{
			name: "held session.ending: a session-end hook before the transcript's last turn waits for the read to the end",
			cfg:  Config{Transcript: true},
			steps: []step{wrapper(starting), started(false), hook(sEnding, "", "hs1"),
				holds("session.started: waiting for the harness to name its session (10s)", "session.ending: waiting for the transcript to be read to its end (30s)"),
				wrapper(tick), transcript(startedE, "", "hs1"), transcript(opening, "f1", "hs1"), transcript(ended, "f1", "hs1"), transcript(pressure, "", "hs1"),
				holds("session.ending: waiting for the transcript to be read to its end (30s)", "supervisor.tick: behind the moments held before it (-)"),
				readToEnd(), holds()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs1",
				"frame.opening f1 transcript session.started@- hs=hs1",
				"frame.opened f1 inferred frame.opening@f1 hs=hs1", "frame.ending f1 inferred frame.opening@f1 hs=hs1",
				"frame.ended f1 transcript frame.opening@f1 hs=hs1",
				"context.pressure_observed - transcript session.started@- hs=hs1",
				"session.ending - hook session.started@- hs=hs1",
				"supervisor.tick - wrapper session.started@- hs=hs1",
			},
		},
		{
			name: "held session.ending: EndReadWait at most; a switch's session.started releases it first",
			cfg:  Config{Transcript: true},
			steps: []step{wrapper(starting), started(false), transcript(startedE, "", "hs1"), hook(sEnding, "", "hs1"), wait(EndReadWait), holds(),
				wrapper(starting), started(false), transcript(startedE, "", "hs2"), hook(sEnding, "", "hs2"), hook(startedE, "", "hs3"), flush()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs1",
				"session.ending - hook session.started@- hs=hs1",
				"session.starting - wrapper session.started@- hs=hs1", "session.started - wrapper session.starting@- hs=hs2",
				"session.ending - hook session.started@- hs=hs2",
				"session.ended - inferred session.ending@- hs=hs2", "session.starting - inferred session.started@- hs=hs3",
				"session.started - hook session.starting@- hs=hs3",
			},
		},
		{
			name:  "held session.ending: not when the stream already tells the end (a renewal's), nor without a transcript",
			cfg:   Config{Transcript: true},
			steps: []step{wrapper(starting), started(false), transcript(startedE, "", "hs1"), wrapper(sEnding), hook(sEnding, "", "hs1"), holds()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs1",
				"session.ending - wrapper session.started@- hs=hs1",
			},
		},
		{
			name:  "held session.started: nothing names the session within the bind wait",
			cfg:   Config{Transcript: true},
			steps: []step{wrapper(starting), started(false), wait(9 * time.Second), holds("session.started: waiting for the harness to name its session (1s)"), wait(time.Second), holds()},
			want:  []string{"session.starting - wrapper -", "session.started - wrapper session.starting@-"},
		},
		{
			name:  "held session.started: a later moment releases it",
			cfg:   Config{HookNamesSession: true},
			steps: []step{wrapper(starting), started(false), hook(opening, "f1", "hs-2")},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs-2",
				"frame.opening f1 hook session.started@- hs=hs-2",
			},
		},
		{
			name: "held session.started: payloads wait for the session-start hook, not the transcript",
			cfg:  Config{Transcript: true, HookNamesSession: true},
			steps: []step{wrapper(starting), started(true), transcript(startedE, "", "hs-3"),
				holds("session.started: waiting for the session-start hook that places the session's payloads (30s)"),
				hook(startedE, "", "hs-3")},
			want: []string{"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs-3"},
		},
		{
			name: "a fresh relaunch's session.started waits for the relaunched harness; a resumed one does not",
			cfg:  Config{Transcript: true},
			steps: []step{wrapper(starting), started(false), transcript(startedE, "", "hs-1"),
				relaunch(false), started(false), holds("session.started: waiting for the relaunched harness to name its session (10s)"),
				transcript(startedE, "", "hs-2"),
				relaunch(true), started(false), holds()},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@- hs=hs-1",
				"session.starting - renewal session.started@-", "session.started - wrapper session.starting@- hs=hs-2",
				"session.starting - renewal session.started@- hs=hs-2", "session.started - wrapper session.starting@- hs=hs-2",
			},
		},
		{
			name:  "each session moment once per harness session, whoever reports it",
			cfg:   Config{},
			steps: []step{wrapper(starting), started(false), hook(startedE, "", ""), transcript(startedE, "", ""), wrapper(sEnded), hook(sEnded, "", "")},
			want: []string{
				"session.starting - wrapper -", "session.started - wrapper session.starting@-",
				"session.ended - wrapper session.started@-",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStory(t, tc.cfg)
			for _, st := range tc.steps {
				st(s)
			}
			if strings.Join(s.lines, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("recorded:\n%s\nwant:\n%s", strings.Join(s.lines, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func declaredOnly(evs ...contract.Event) contract.AdapterManifest {
	m := contract.AdapterManifest{LifecycleEvents: map[contract.Event]contract.EventSupport{}}
	for _, ev := range evs {
		m.LifecycleEvents[ev] = contract.EventSupport{Support: contract.SupportSynthesized, Modes: []contract.IntegrationMode{contract.ModeLauncherWrapper}}
	}
	return m
}

// TestResumeAfterCrash: a wrapper continuing a crashed session's ledger
// takes the story up where the receipts left it: a repeated launch step
// is dropped, a frame's recorded stages are not told again, and new
// receipts link to the recorded ones; a failed hook call's receipt is
// not part of the story.
func TestResumeAfterCrash(t *testing.T) {
	hsid := "hs-9"
	prior := []contract.LifecycleReceipt{
		{ReceiptID: "p1", Event: starting},
		{ReceiptID: "p2", Event: startedE, HarnessSessionID: &hsid},
		{ReceiptID: "p3", Event: opening, EventID: "f1/frame.opening"},
		{ReceiptID: "p4", Event: opened, TelemetrySummary: map[string]any{"frame_id": "f1"}},
		{ReceiptID: "p5", Event: ended, Status: contract.StatusFailed, Warnings: []contract.Warning{{Code: HookFailedWarning}},
			TelemetrySummary: map[string]any{"frame_id": "f2"}},
	}
	k := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
	k.remember([]string{hsid})
	k.resume(prior)
	if k.bind(hsid) {
		t.Error("a harness session id the session already had was reported new")
	}
	if out := k.admit(Moment{Event: startedE}); out != nil {
		t.Errorf("session.started told again: %v", out)
	}
	if out := k.admit(Moment{Event: opened, Frame: &contract.FrameContext{FrameID: "f1"}}); out != nil {
		t.Errorf("a recorded frame stage told again: %v", out)
	}
	out := k.admit(Moment{Event: ending, Frame: &contract.FrameContext{FrameID: "f1"}, Summary: map[string]any{}})
	if len(out) != 1 {
		t.Fatalf("frame.ending after the resumed frame.opened: %v", out)
	}
	if m := k.link(out[0]); m.Parent == nil || *m.Parent != "p3" || m.HarnessSessionID != hsid {
		t.Errorf("frame.ending links to %v (harness %q), want p3 and %s", m.Parent, m.HarnessSessionID, hsid)
	}
	// f2's failed hook call left no trace: its first stage is not inferred away.
	if out := k.admit(Moment{Event: opening, Frame: &contract.FrameContext{FrameID: "f2"}}); len(out) != 1 {
		t.Errorf("frame f2 after a failed hook call: %v", out)
	}
	if l := k.links(); l.Starting != "p1" || l.Started != "p2" || l.Frames["f1"] != "p3" {
		t.Errorf("links after resuming: %+v", l)
	}
}
