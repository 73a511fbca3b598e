package stream

import (
	"fmt"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

func frameMoment(ev contract.Event, frame, source string) Moment {
	return Moment{Event: ev, Frame: &contract.FrameContext{FrameID: frame, FrameClass: contract.FrameTopLevel},
		Summary: map[string]any{"source": source}}
}

func allDeclared() contract.AdapterManifest {
	m := contract.AdapterManifest{LifecycleEvents: map[contract.Event]contract.EventSupport{}}
	for _, ev := range frameStages {
		m.LifecycleEvents[ev] = contract.EventSupport{Support: contract.SupportSynthesized, Modes: []contract.IntegrationMode{contract.ModeLauncherWrapper}}
	}
	return m
}

// interleavings calls f with every merge of the sources that keeps each
// source's own order.
func interleavings(sources [][]Moment, f func([]Moment)) {
	var rec func(pos []int, acc []Moment)
	rec = func(pos []int, acc []Moment) {
		done := true
		for i, s := range sources {
			if pos[i] < len(s) {
				done = false
				pos[i]++
				rec(pos, append(acc, s[pos[i]-1]))
				pos[i]--
			}
		}
		if done {
			f(append([]Moment(nil), acc...))
		}
	}
	rec(make([]int, len(sources)), nil)
}

// TestCoherenceFrameInterleavings feeds the merger every interleaving of
// a frame's moments as the hook bridge (opening, ending, ended), a notify
// program (ending, ended) and the transcript (all four) report them, and
// checks the stream invariants: each stage at most once, in causal order,
// none lost (every stage a source reported is in the stream, observed or
// inferred), and the observed ones keep their source.
func TestCoherenceFrameInterleavings(t *testing.T) {
	hook := []Moment{
		frameMoment(contract.EventFrameOpening, "f1", "hook"),
		frameMoment(contract.EventFrameEnding, "f1", "hook"),
		frameMoment(contract.EventFrameEnded, "f1", "hook"),
	}
	notify := []Moment{
		frameMoment(contract.EventFrameEnding, "f1", "notify"),
		frameMoment(contract.EventFrameEnded, "f1", "notify"),
	}
	transcript := []Moment{
		frameMoment(contract.EventFrameOpening, "f1", "transcript"),
		frameMoment(contract.EventFrameOpened, "f1", "transcript"),
		frameMoment(contract.EventFrameEnding, "f1", "transcript"),
		frameMoment(contract.EventFrameEnded, "f1", "transcript"),
	}
	for _, tc := range []struct {
		name    string
		sources [][]Moment
	}{
		{"hook+notify+transcript", [][]Moment{hook, notify, transcript}},
		{"hook+transcript", [][]Moment{hook, transcript}},
		{"notify+transcript", [][]Moment{notify, transcript}},
		{"hook+notify", [][]Moment{hook, notify}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			interleavings(tc.sources, func(in []Moment) {
				n++
				c := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
				var out []Moment
				for _, m := range in {
					out = append(out, c.admit(m)...)
				}
				checkFrameStream(t, in, out)
			})
			if n == 0 {
				t.Fatal("no interleaving generated")
			}
		})
	}
}

func checkFrameStream(t *testing.T, in, out []Moment) {
	t.Helper()
	describe := func() string {
		s := ""
		for _, m := range in {
			s += fmt.Sprintf(" %s/%s", m.Summary["source"], m.Event)
		}
		return s
	}
	last := 0
	seen := map[contract.Event]bool{}
	for _, m := range out {
		k := frameStage(m.Event)
		if k <= last {
			t.Fatalf("input%s: %s after stage %d (out of order or repeated)", describe(), m.Event, last)
		}
		last = k
		seen[m.Event] = true
	}
	maxIn := 0
	for _, m := range in {
		maxIn = max(maxIn, frameStage(m.Event))
	}
	for k := 1; k <= maxIn; k++ {
		if !seen[frameStages[k-1]] {
			t.Fatalf("input%s: stage %s missing from the stream", describe(), frameStages[k-1])
		}
	}
	if len(out) > 0 && out[0].Summary["source"] == "inferred" && in[0].Event == out[0].Event {
		t.Fatalf("input%s: the first moment was replaced by an inferred one", describe())
	}
}

// TestCoherenceInfersOnlyDeclared: a stage the manifest does not declare
// is never invented.
func TestCoherenceInfersOnlyDeclared(t *testing.T) {
	m := allDeclared()
	m.LifecycleEvents[contract.EventFrameOpened] = contract.EventSupport{Support: contract.SupportUnavailable}
	c := New(Config{Manifest: m, Mode: contract.ModeLauncherWrapper})
	out := c.admit(frameMoment(contract.EventFrameEnded, "f", "hook"))
	var evs []contract.Event
	for _, o := range out {
		evs = append(evs, o.Event)
	}
	want := []contract.Event{contract.EventFrameOpening, contract.EventFrameEnding, contract.EventFrameEnded}
	if fmt.Sprint(evs) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", evs, want)
	}
	if out[0].Summary["source"] != "inferred" || out[0].Summary["inferred_from"] != "frame.ended" {
		t.Errorf("inferred summary %v", out[0].Summary)
	}
	if late := c.admit(frameMoment(contract.EventFrameOpened, "f", "transcript")); len(late) != 0 {
		t.Errorf("a stage after its frame ended was recorded: %v", late)
	}
}

// TestCoherenceSessionMoments: per harness session one starting, one
// started, at most one ending, one ended, whoever reports them; a new
// session.starting (a renewal) opens the next harness session.
func TestCoherenceSessionMoments(t *testing.T) {
	c := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
	in := []contract.Event{
		contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionStarted, // process, hook
		contract.EventSessionEnding, contract.EventSessionEnding, // renewal, SessionEnd hook
		contract.EventSessionEnded, contract.EventSessionEnded,
		contract.EventSessionStarting, contract.EventSessionStarting, // a recovery repeats the relaunch's step
		contract.EventSessionStarted, contract.EventSessionStarted,
		contract.EventSessionEnding, contract.EventSessionEnded,
	}
	var got []contract.Event
	for _, ev := range in {
		for _, m := range c.admit(Moment{Event: ev}) {
			got = append(got, m.Event)
		}
	}
	want := []contract.Event{
		contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnding, contract.EventSessionEnded,
		contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnding, contract.EventSessionEnded,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
	// A late session.started after the end is dropped too.
	if out := c.admit(Moment{Event: contract.EventSessionStarted}); out != nil {
		t.Errorf("session.started after session.ended recorded: %v", out)
	}
}

// TestCoherenceNoFrameAfterSessionEnding feeds the keeper every
// interleaving of a harness's session-end hook with its transcript's
// last turn (and a tick of the wrapper's), then the drain's read to the
// end, and checks that nothing of the session's frames follows its
// session.ending, and that every moment is recorded once.
func TestCoherenceNoFrameAfterSessionEnding(t *testing.T) {
	hookSrc := []Moment{{Event: contract.EventSessionEnding, Summary: map[string]any{"source": "hook"}}}
	transcript := []Moment{
		frameMoment(contract.EventFrameOpening, "f1", "transcript"),
		frameMoment(contract.EventFrameEnded, "f1", "transcript"),
		{Event: contract.EventContextPressureObserved, Summary: map[string]any{"source": "transcript"}},
	}
	wrapperSrc := []Moment{{Event: contract.EventSupervisorTick, Summary: map[string]any{"source": "wrapper"}}}
	now := time.Unix(1000, 0)
	interleavings([][]Moment{hookSrc, transcript, wrapperSrc}, func(in []Moment) {
		k := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper, Transcript: true, BindWait: time.Second})
		var out []Moment
		record := func(r release, ok bool) {
			if ok {
				out = append(out, k.admit(r.Moment)...)
			}
		}
		record(k.offer(Moment{Event: contract.EventSessionStarting}))
		record(k.offer(Moment{Event: contract.EventSessionStarted}))
		for _, m := range in {
			switch m.Summary["source"] {
			case "hook":
				record(k.offerHook(m, now, true))
			case "transcript":
				record(k.offerTranscript(m, now, true))
			default:
				record(k.offer(m))
			}
			for r, ok := k.pop(now); ok; r, ok = k.pop(now) {
				record(r, true)
			}
		}
		k.readToEnd()
		for _, r := range k.flush() {
			record(r, true)
		}
		var evs []string
		ending := false
		for _, m := range out {
			evs = append(evs, string(m.Event))
			if m.Event == contract.EventSessionEnding {
				ending = true
			}
			if ending && m.Frame != nil {
				t.Fatalf("input %v: %s after session.ending: %v", sources(in), m.Event, evs)
			}
		}
		if n := len(out); n != 2+1+4+1+1 {
			t.Fatalf("input %v: recorded %v, want starting, started, ending, four frame stages, pressure and the tick", sources(in), evs)
		}
	})
}

func sources(in []Moment) []string {
	var out []string
	for _, m := range in {
		out = append(out, fmt.Sprintf("%s/%s", m.Summary["source"], m.Event))
	}
	return out
}
