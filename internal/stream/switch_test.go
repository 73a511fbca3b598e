package stream

import (
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// TestHarnessSessionSwitch: a hook's session.started that names another
// harness session while the current one runs is a switch inside one
// process: session.ended (reason harness_session_switched) for the old
// id, session.starting and session.started for the new one, chained;
// the same id again, a session.started from another source, or one
// before anything named the session is not a switch.
func TestHarnessSessionSwitch(t *testing.T) {
	hook := func(id string) Moment {
		return Moment{Event: contract.EventSessionStarted, HarnessSessionID: id, Summary: map[string]any{"source": "hook"}}
	}
	from := func(src, id string) Moment {
		return Moment{Event: contract.EventSessionStarted, HarnessSessionID: id, Summary: map[string]any{"source": src}}
	}
	starting := Moment{Event: contract.EventSessionStarting, Summary: map[string]any{"source": "wrapper"}}
	ending := Moment{Event: contract.EventSessionEnding, Summary: map[string]any{"source": "wrapper"}}
	ended := Moment{Event: contract.EventSessionEnded, Summary: map[string]any{"source": "wrapper"}}
	for _, tc := range []struct {
		name string
		in   []Moment
		want []string
	}{
		{"clear: a new id from the hook", []Moment{starting, hook("A"), hook("B"), ending, ended}, []string{
			"session.starting - wrapper -",
			"session.started - hook session.starting@- hs=A",
			"session.ended - inferred session.started@- hs=A",
			"session.starting - inferred session.started@- hs=B",
			"session.started - hook session.starting@- hs=B",
			"session.ending - wrapper session.started@- hs=B",
			"session.ended - wrapper session.ending@- hs=B",
		}},
		{"two switches", []Moment{starting, hook("A"), hook("B"), hook("C")}, []string{
			"session.starting - wrapper -",
			"session.started - hook session.starting@- hs=A",
			"session.ended - inferred session.started@- hs=A",
			"session.starting - inferred session.started@- hs=B",
			"session.started - hook session.starting@- hs=B",
			"session.ended - inferred session.started@- hs=B",
			"session.starting - inferred session.started@- hs=C",
			"session.started - hook session.starting@- hs=C",
		}},
		{"compact: the same id again", []Moment{starting, hook("A"), hook("A")}, []string{
			"session.starting - wrapper -",
			"session.started - hook session.starting@- hs=A",
		}},
		{"the transcript's report of another id", []Moment{starting, hook("A"), from("transcript", "B")}, []string{
			"session.starting - wrapper -",
			"session.started - hook session.starting@- hs=A",
		}},
		{"a late naming after an unnamed start", []Moment{starting, from("wrapper", ""), hook("A")}, []string{
			"session.starting - wrapper -",
			"session.started - wrapper session.starting@-",
		}},
		{"after the session-end hook's session.ending", []Moment{starting, hook("A"), ending, hook("B")}, []string{
			"session.starting - wrapper -",
			"session.started - hook session.starting@- hs=A",
			"session.ending - wrapper session.started@- hs=A",
			"session.ended - inferred session.ending@- hs=A",
			"session.starting - inferred session.started@- hs=B",
			"session.started - hook session.starting@- hs=B",
		}},
		{"after session.ended", []Moment{starting, hook("A"), ending, ended, hook("B")}, []string{
			"session.starting - wrapper -",
			"session.started - hook session.starting@- hs=A",
			"session.ending - wrapper session.started@- hs=A",
			"session.ended - wrapper session.ending@- hs=A",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStory(t, Config{})
			for _, m := range tc.in {
				s.d.Step(Fact{Kind: Direct, Moment: m})
			}
			if got := strings.Join(s.lines, "\n"); got != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", got, strings.Join(tc.want, "\n"))
			}
		})
	}
}

// TestHarnessSessionSwitchSummary: the switch's receipts say why and
// which switch, and a keeper resumed from them numbers the next one on.
func TestHarnessSessionSwitchSummary(t *testing.T) {
	k := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
	var prior []contract.LifecycleReceipt
	rec := func(ms []Moment) []Moment {
		for i, m := range ms {
			m = k.link(m)
			id := "r" + string(rune('a'+len(prior)))
			k.Recorded(m, id)
			hs := m.HarnessSessionID
			prior = append(prior, contract.LifecycleReceipt{ReceiptID: id, Event: m.Event, HarnessSessionID: &hs, TelemetrySummary: m.Summary})
			ms[i] = m
		}
		return ms
	}
	hook := func(id string) Moment {
		k.bind(id)
		return Moment{Event: contract.EventSessionStarted, HarnessSessionID: id, Summary: map[string]any{"source": "hook"}}
	}
	rec(k.admit(Moment{Event: contract.EventSessionStarting}))
	rec(k.admit(hook("A")))
	out := rec(k.admit(hook("B")))
	if len(out) != 3 {
		t.Fatalf("switch recorded %d moments, want 3", len(out))
	}
	for _, m := range out {
		if m.Summary[contract.SummaryReason] != contract.HarnessSessionSwitched || m.Summary[contract.SummarySwitch] != 1 {
			t.Errorf("%s summary %v", m.Event, m.Summary)
		}
	}
	if out[0].Summary[contract.SummaryPhase] != string(contract.PhaseStopped) || out[0].HarnessSessionID != "A" || out[2].HarnessSessionID != "B" {
		t.Errorf("ended %+v, started %+v", out[0], out[2])
	}

	r := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
	r.resume(prior)
	r.bind("C")
	next := r.admit(Moment{Event: contract.EventSessionStarted, HarnessSessionID: "C", Summary: map[string]any{"source": "hook"}})
	if len(next) != 3 || next[0].HarnessSessionID != "B" || next[0].Summary[contract.SummarySwitch] != 2 {
		t.Errorf("after resuming, the next switch: %+v", next)
	}
}
