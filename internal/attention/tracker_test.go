package attention

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func claim(s int, src Source, st State, detail string) Fact {
	return Fact{At: at(s), Kind: Claim, Source: src, State: st, Detail: detail}
}

func boundary(s int, k FactKind) Fact { return Fact{At: at(s), Kind: k, Source: SourceFrame} }

// TestTransitions: each row starts a tracker, feeds the facts and checks
// the state, its source and its since.
func TestTransitions(t *testing.T) {
	cases := []struct {
		name    string
		facts   []Fact
		state   State
		source  Source
		since   int
		changed bool // whether the last fact changed the attention
	}{
		{"no evidence", nil, Unknown, "", 0, false},
		{"turn started", []Fact{boundary(1, TurnStarted)}, Working, SourceFrame, 1, true},
		{"turn ended", []Fact{boundary(1, TurnStarted), boundary(5, TurnEnded)}, WaitingForInput, SourceFrame, 5, true},
		{"hook asks permission", []Fact{boundary(1, TurnStarted), claim(2, SourceHook, NeedsPermission, "Bash")}, NeedsPermission, SourceHook, 2, true},
		{"key typed answers the dialog", []Fact{boundary(1, TurnStarted), claim(2, SourceHook, NeedsPermission, "Bash"), boundary(9, KeyTyped)}, Working, SourceFrame, 9, true},
		{"key typed answers a question", []Fact{claim(2, SourceHook, NeedsAnswer, "q"), boundary(4, KeyTyped)}, Working, SourceFrame, 4, true},
		{"key typed at the prompt is no answer", []Fact{boundary(1, TurnStarted), boundary(3, TurnEnded), boundary(4, KeyTyped)}, WaitingForInput, SourceFrame, 3, false},
		{"key typed at an error is no answer", []Fact{claim(2, SourceHook, StoppedOnError, "rate_limit"), boundary(4, KeyTyped)}, StoppedOnError, SourceHook, 2, false},
		{"hook says the tool ran", []Fact{claim(2, SourceHook, NeedsPermission, "Bash"), claim(7, SourceHook, Working, "")}, Working, SourceHook, 7, true},
		{"same state keeps since", []Fact{claim(2, SourceHook, NeedsPermission, "Bash"), claim(8, SourceHook, NeedsPermission, "")}, NeedsPermission, SourceHook, 2, false},
		{"screen cannot clear a hook's episode", []Fact{claim(2, SourceHook, NeedsPermission, "Bash"), claim(3, SourceScreen, Working, "")}, NeedsPermission, SourceHook, 2, false},
		{"screen cannot change a hook's episode", []Fact{claim(2, SourceHook, NeedsPermission, "Bash"), claim(3, SourceScreen, WaitingForInput, "")}, NeedsPermission, SourceHook, 2, false},
		{"transcript cannot override a hook", []Fact{claim(2, SourceHook, StoppedOnError, "x"), claim(3, SourceTranscript, Working, "")}, StoppedOnError, SourceHook, 2, false},
		{"screen cannot override a transcript", []Fact{claim(2, SourceTranscript, NeedsAnswer, ""), claim(3, SourceScreen, NeedsPermission, "")}, NeedsAnswer, SourceTranscript, 2, false},
		{"hook upgrades a screen episode, since kept", []Fact{claim(2, SourceScreen, NeedsPermission, ""), claim(3, SourceHook, NeedsPermission, "Bash")}, NeedsPermission, SourceHook, 2, true},
		{"hook overrides a screen episode", []Fact{claim(2, SourceScreen, NeedsPermission, ""), claim(3, SourceHook, Working, "")}, Working, SourceHook, 3, true},
		{"an error written after the turn ended", []Fact{boundary(1, TurnStarted), boundary(3, TurnEnded), claim(4, SourceTranscript, StoppedOnError, "rate_limit_error (429)")}, StoppedOnError, SourceTranscript, 4, true},
		{"screen cannot override a finished turn", []Fact{boundary(1, TurnStarted), boundary(3, TurnEnded), claim(4, SourceScreen, NeedsPermission, "")}, WaitingForInput, SourceFrame, 3, false},
		{"a late turn start keeps the error it had", []Fact{boundary(1, KeyTyped), claim(3, SourceTranscript, StoppedOnError, "rate_limit (429)"), boundary(4, TurnStarted)}, StoppedOnError, SourceTranscript, 3, false},
		{"a prompt typed after the error starts a turn", []Fact{claim(3, SourceTranscript, StoppedOnError, "rate_limit (429)"), boundary(5, KeyTyped), boundary(6, TurnStarted)}, Working, SourceFrame, 6, true},
		{"screen claims while working", []Fact{boundary(1, TurnStarted), claim(4, SourceScreen, NeedsPermission, "")}, NeedsPermission, SourceScreen, 4, true},
		{"a turn boundary ends a hook's episode", []Fact{claim(2, SourceHook, NeedsPermission, ""), boundary(6, TurnEnded)}, WaitingForInput, SourceFrame, 6, true},
		{"a new turn ends an error", []Fact{claim(2, SourceHook, StoppedOnError, "rate_limit"), boundary(6, TurnStarted)}, Working, SourceFrame, 6, true},
		{"turn end keeps the error", []Fact{boundary(1, TurnStarted), claim(2, SourceHook, StoppedOnError, "server_error"), boundary(3, TurnEnded)}, StoppedOnError, SourceHook, 2, false},
		{"idle notification after the turn end", []Fact{boundary(1, TurnStarted), boundary(3, TurnEnded), claim(7, SourceHook, WaitingForInput, "")}, WaitingForInput, SourceFrame, 3, false},
		{"an unknown claim is ignored", []Fact{boundary(1, TurnStarted), claim(2, SourceHook, Unknown, "")}, Working, SourceFrame, 1, false},
		{"an older fact is taken at the last time", []Fact{boundary(5, TurnStarted), claim(2, SourceHook, NeedsPermission, "")}, NeedsPermission, SourceHook, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tr := NewTracker(t0)
			changed := false
			for _, f := range c.facts {
				changed = tr.Observe(f)
			}
			got := tr.Current()
			if got.State != c.state || got.Source != c.source || !got.Since.Equal(at(c.since)) || changed != c.changed {
				t.Errorf("got %s from %q since +%v (changed %v), want %s from %q since +%ds (changed %v)",
					got.State, got.Source, got.Since.Sub(t0), changed, c.state, c.source, c.since, c.changed)
			}
		})
	}
}

// TestEpisodes: each waiting state is one episode with its turn; working
// is none; sums per kind and per turn.
func TestEpisodes(t *testing.T) {
	tr := NewTracker(t0)
	for _, f := range []Fact{
		boundary(0, TurnStarted),
		claim(2, SourceHook, NeedsPermission, "Bash"),
		claim(8, SourceHook, NeedsPermission, "Claude needs your permission"),
		boundary(12, KeyTyped),
		boundary(15, TurnEnded),
		boundary(40, TurnStarted),
		claim(41, SourceHook, StoppedOnError, "rate_limit"),
	} {
		tr.Observe(f)
	}
	eps := tr.Episodes()
	want := []Episode{
		{ID: 1, Kind: NeedsPermission, Source: SourceHook, Detail: "Bash", Turn: 1, Start: at(2), End: at(12)},
		{ID: 2, Kind: WaitingForInput, Source: SourceFrame, Turn: 1, Start: at(15), End: at(40)},
		{ID: 3, Kind: StoppedOnError, Source: SourceHook, Detail: "rate_limit", Turn: 2, Start: at(41)},
	}
	if len(eps) != len(want) {
		t.Fatalf("episodes %+v", eps)
	}
	for i := range want {
		if eps[i] != want[i] {
			t.Errorf("episode %d: %+v, want %+v", i, eps[i], want[i])
		}
	}
	if cur := tr.Current(); cur.Episode != 3 || !eps[2].Open() || eps[0].Open() {
		t.Errorf("open episode %d, episodes %+v", cur.Episode, eps)
	}
	total, perTurn := Waited(eps, at(50))
	if total != 10*time.Second+25*time.Second+9*time.Second || perTurn[1] != 35*time.Second || perTurn[2] != 9*time.Second {
		t.Errorf("waited %v per turn %v", total, perTurn)
	}
	blocking, _ := Waited(eps, at(50), NeedsPermission, NeedsAnswer)
	if blocking != 10*time.Second {
		t.Errorf("blocking wait %v, want 10s", blocking)
	}
}

// TestDetail: the first detail of an episode stays (Claude's tool name
// over its notification's message); a blank one is filled by a later fact.
func TestDetail(t *testing.T) {
	tr := NewTracker(t0)
	tr.Observe(claim(1, SourceScreen, NeedsPermission, ""))
	if !tr.Observe(claim(2, SourceHook, NeedsPermission, "Bash")) || tr.Current().Detail != "Bash" || tr.Episodes()[0].Detail != "Bash" || tr.Episodes()[0].Source != SourceHook {
		t.Fatalf("blank detail not filled: %+v %+v", tr.Current(), tr.Episodes())
	}
	if tr.Observe(claim(3, SourceHook, NeedsPermission, "Claude needs your permission")) || tr.Current().Detail != "Bash" {
		t.Errorf("detail replaced: %+v", tr.Current())
	}
}

// TestEnd: a session that ends closes its open episode.
func TestEnd(t *testing.T) {
	tr := NewTracker(t0)
	tr.Observe(claim(1, SourceHook, StoppedOnError, "rate_limit"))
	tr.End(at(9))
	if eps := tr.Episodes(); len(eps) != 1 || !eps[0].End.Equal(at(9)) || tr.Current().State != Unknown || tr.Current().Episode != 0 {
		t.Errorf("after End: %+v %+v", tr.Current(), eps)
	}
}

func TestBound(t *testing.T) {
	long := ""
	for i := 0; i < 100; i++ {
		long += "é"
	}
	cases := map[string]string{
		"Bash":                  "Bash",
		"two\nlines\t here\x07": "two lines here",
		long:                    long[:2*(MaxDetail-1)] + "…",
	}
	for in, want := range cases {
		if got := Bound(in); got != want {
			t.Errorf("Bound(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestMatchScreen(t *testing.T) {
	f, ok := MatchScreen(claudeReader.AttentionScreen(), " Bash command\n\n Do you want to proceed?\n ❯ 1. Yes", at(3))
	if !ok || f.State != NeedsPermission || f.Source != SourceScreen || !f.At.Equal(at(3)) {
		t.Errorf("match %+v %v", f, ok)
	}
	if _, ok := MatchScreen(claudeReader.AttentionScreen(), "❯ hello", at(3)); ok {
		t.Error("matched a prompt")
	}
}
