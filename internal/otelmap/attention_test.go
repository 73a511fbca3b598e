package otelmap_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelmap"
)

// testdata/claude-attention.receipts.jsonl is built, not recorded: the
// stream the wrapper records for a session that waits (docs/attention.md),
// with Claude Code's receipts around it. From its first receipt (t0):
// turn 1 opens at 2 s; a permission dialog (hook PermissionRequest,
// "Bash") from 3.25 s to 10.75 s, answered by a key (episode 1, 7500 ms);
// the turn ends at 12.01 s (frame.ended: needs_permission 7500 ms, one
// episode); waiting for input from 12.01 s to 72.01 s (episode 2, 60 s;
// an interval tick at 42.01 s carries the same block); turn 2 opens at
// 72.01 s and stops on a rate limit at 72.6 s (episode 3, hook
// StopFailure, frame.ended at 72.7 s: stopped_on_error 100 ms), still
// open when the wrapper's SIGTERM ends the session at 90.4 s: its
// session.ended carries the session's block, state unknown, with
// episode 3 closed (17 800 ms).
const attentionLedger = "claude-attention.receipts.jsonl"

// TestAttentionEpisodesOnTheIncarnation: each episode is one event on
// the incarnation span at its start, with its kind, source, detail,
// turn, id and duration; the one still open at the end is closed by the
// session's end.
func TestAttentionEpisodesOnTheIncarnation(t *testing.T) {
	checkEpisodes(t, mapLedger(t, attentionLedger))
}

// TestAttentionEpisodeOpenAtASealedEnd: a session.ended without the
// block (the end sealed after a lost wrapper) still closes the episode
// the ticks left open, at its time.
func TestAttentionEpisodeOpenAtASealedEnd(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", attentionLedger))
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	var end map[string]any
	if err := json.Unmarshal(lines[len(lines)-1], &end); err != nil {
		t.Fatal(err)
	}
	delete(end["telemetry_summary"].(map[string]any), "attention")
	lines[len(lines)-1], _ = json.Marshal(end)
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	if err := os.WriteFile(path, append(bytes.Join(lines, []byte("\n")), '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	m := otelmap.New("ses_sealed")
	res := mapped{id: "ses_sealed", mapper: m}
	for e, err := range ledger.ReadSince(path, 0) {
		if err != nil {
			t.Fatal(err)
		}
		o := m.Map(e)
		res.out.Spans = append(res.out.Spans, o.Spans...)
		res.out.Metrics = append(res.out.Metrics, o.Metrics...)
	}
	checkEpisodes(t, res)
}

func checkEpisodes(t *testing.T, r mapped) {
	t.Helper()
	incs := spansNamed(r.out, "invoke_agent claude")
	if len(incs) != 1 {
		t.Fatalf("%d incarnations", len(incs))
	}
	inc := incs[0]
	t0 := inc.Start
	type ep struct {
		kind, source, detail, endedBy string
		id, turn                      int64
		atMs, durMs                   int64
	}
	want := []ep{
		{"needs_permission", "hook", "Bash", otelmap.EndedByChange, 1, 1, 3250, 7500},
		{"waiting_for_input", "frame", "", otelmap.EndedByChange, 2, 1, 12010, 60000},
		{"stopped_on_error", "hook", "rate_limit", otelmap.EndedBySessionEnd, 3, 2, 72600, 17800},
	}
	var got []ep
	for _, ev := range inc.Events {
		if ev.Name != otelmap.EventAttentionEpisode {
			continue
		}
		s := func(k attribute.Key) string { v, _ := attr(ev.Attrs, k); return v.AsString() }
		n := func(k attribute.Key) int64 { v, _ := attr(ev.Attrs, k); return v.AsInt64() }
		got = append(got, ep{s(otelmap.AttrAttentionKind), s(otelmap.AttrSource), s(otelmap.AttrAttentionDetail), s(otelmap.AttrAttentionEndedBy),
			n(otelmap.AttrAttentionEpisode), n(otelmap.AttrAttentionTurn), ev.Time.Sub(t0).Milliseconds(), n(otelmap.AttrAttentionDuration)})
	}
	if len(got) != len(want) {
		t.Fatalf("episode events %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("episode %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	for _, s := range r.out.Spans {
		if s.Name == otelmap.SpanSession {
			for _, ev := range s.Events {
				if ev.Name == otelmap.EventAttentionEpisode {
					t.Errorf("an episode event on the session span: %+v", ev)
				}
			}
		}
	}
}

// TestAttentionTurnOnTheFrame: a frame.ended's turn block becomes its
// frame span's waited_ms per kind and its number of episodes.
func TestAttentionTurnOnTheFrame(t *testing.T) {
	r := mapLedger(t, attentionLedger)
	frames := spansNamed(r.out, otelmap.SpanFrame)
	if len(frames) != 2 {
		t.Fatalf("%d frames", len(frames))
	}
	for i, want := range []map[string]int64{
		{otelmap.AttrWaitedPrefix + "needs_permission": 7500, string(otelmap.AttrAttentionEpisodes): 1},
		{otelmap.AttrWaitedPrefix + "stopped_on_error": 100, string(otelmap.AttrAttentionEpisodes): 1},
	} {
		n := 0
		for _, kv := range frames[i].Attrs {
			if strings.HasPrefix(string(kv.Key), "lifeloop.attention.") {
				n++
				if w, ok := want[string(kv.Key)]; !ok || kv.Value.AsInt64() != w {
					t.Errorf("frame %d: %s = %v, want %v", i+1, kv.Key, kv.Value.Emit(), want)
				}
			}
		}
		if n != len(want) {
			t.Errorf("frame %d: %d attention attributes, want %v", i+1, n, want)
		}
	}
	plain := mapLedger(t, "claude-print.receipts.jsonl")
	for _, s := range plain.out.Spans {
		for _, kv := range s.Attrs {
			if strings.HasPrefix(string(kv.Key), "lifeloop.attention.") {
				t.Errorf("a ledger without attention gave %s on %s", kv.Key, s.Name)
			}
		}
	}
}

// TestAttentionMetrics: lifeloop.sessions.waiting says, at every tick
// with a block, 1 for the state's kind and 0 for the others, and 0 for
// all at the end; lifeloop.attention.wait.duration observes each episode
// once, per kind and harness.
func TestAttentionMetrics(t *testing.T) {
	r := mapLedger(t, attentionLedger)
	type point struct {
		at    time.Time
		kinds map[string]int64
	}
	var waiting []point
	hist := map[string]*otelmap.Hist{}
	for _, m := range r.out.Metrics {
		kind, _ := attr(m.Attrs, otelmap.AttrAttentionKind)
		switch m.Name {
		case otelmap.MetricWaiting:
			if m.Kind != otelmap.UpDownCounter {
				t.Errorf("%s kind %v", m.Name, m.Kind)
			}
			if len(waiting) == 0 || !waiting[len(waiting)-1].at.Equal(m.Time) {
				waiting = append(waiting, point{m.Time, map[string]int64{}})
			}
			waiting[len(waiting)-1].kinds[kind.AsString()] = m.Int
		case otelmap.MetricWaitTime:
			if h, _ := attr(m.Attrs, otelmap.AttrAdapter); h.AsString() != "claude" || m.Unit != "s" {
				t.Errorf("%s: harness %q unit %q", m.Name, h.AsString(), m.Unit)
			}
			hist[kind.AsString()] = m.Hist
		}
	}
	// The ticks: working, needs_permission, working, waiting_for_input,
	// the interval tick, working, stopped_on_error; then the end.
	wantOne := []string{"", "needs_permission", "", "waiting_for_input", "waiting_for_input", "", "stopped_on_error", ""}
	if len(waiting) != len(wantOne) {
		t.Fatalf("%d instants of %s, want %d", len(waiting), otelmap.MetricWaiting, len(wantOne))
	}
	for i, p := range waiting {
		if len(p.kinds) != 4 {
			t.Errorf("point %d: kinds %v, want the four waiting kinds", i, p.kinds)
		}
		for k, v := range p.kinds {
			if want := int64(0); k == wantOne[i] && v != 1 || k != wantOne[i] && v != want {
				t.Errorf("point %d: %s = %d, want 1 only for %q", i, k, v, wantOne[i])
			}
		}
	}
	for kind, sec := range map[string]float64{"needs_permission": 7.5, "waiting_for_input": 60, "stopped_on_error": 17.8} {
		h := hist[kind]
		if h == nil || h.Count != 1 || h.Sum != sec {
			t.Errorf("%s %s: %+v, want one observation of %v s", otelmap.MetricWaitTime, kind, h, sec)
		}
	}
	if len(hist) != 3 {
		t.Errorf("histogram kinds %v", hist)
	}
}

// TestAttentionNamesAreDocumented: docs/otel.md names every attention
// name the mapping emits.
func TestAttentionNamesAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "otel.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		otelmap.EventAttentionEpisode, string(otelmap.AttrAttentionKind), string(otelmap.AttrAttentionEpisode),
		string(otelmap.AttrAttentionDetail), string(otelmap.AttrAttentionTurn), string(otelmap.AttrAttentionDuration),
		string(otelmap.AttrAttentionEndedBy), string(otelmap.AttrAttentionEpisodes), otelmap.AttrWaitedPrefix + "<kind>",
		otelmap.MetricWaiting, otelmap.MetricWaitTime,
	} {
		if !bytes.Contains(doc, []byte("`"+name+"`")) {
			t.Errorf("docs/otel.md does not name `%s`", name)
		}
	}
}
