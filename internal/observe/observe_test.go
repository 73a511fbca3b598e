package observe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/telemetry"
)

const testSID = "0b7e3f52-1c1d-4c55-9a51-7a0e2d0c9f11"

// Claude-shaped transcript lines (the fields the parser reads).
func tUser(uuid, prompt string) string {
	return `{"parentUuid":null,"isSidechain":false,"promptId":"` + prompt + `","type":"user","message":{"role":"user","content":"secret prompt text"},"uuid":"` + uuid + `","timestamp":"2026-11-21T22:12:16.835Z","cwd":"/p","sessionId":"` + testSID + `"}`
}

func tAsst(msgID, stop string, tokens int) string {
	return `{"parentUuid":"x","isSidechain":false,"message":{"id":"` + msgID + `","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"secret model output"}],"stop_reason":"` + stop + `","usage":{"input_tokens":` + fmt.Sprint(tokens) + `,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}},"type":"assistant","uuid":"a-` + msgID + `","requestId":"req-` + msgID + `","timestamp":"2026-11-21T22:12:17.000Z","cwd":"/p","sessionId":"` + testSID + `"}`
}

func tCompact(pre, post int) string {
	return `{"parentUuid":null,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","timestamp":"2026-11-21T22:13:00.000Z","uuid":"s1","compactMetadata":{"trigger":"auto","preTokens":` + fmt.Sprint(pre) + `,"postTokens":` + fmt.Sprint(post) + `},"sessionId":"` + testSID + `"}`
}

func writeLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(strings.Join(lines, "\n") + "\n"); err != nil {
		t.Fatal(err)
	}
}

// collector reads moments from a watcher until a condition holds.
type collector struct {
	t   *testing.T
	ch  <-chan moment.Moment
	got []moment.Moment
}

// until reads moments until ok returns true for the list so far. The
// bound only keeps a broken watcher from hanging the test.
func (c *collector) until(what string, ok func([]moment.Moment) bool) {
	c.t.Helper()
	bound := time.NewTimer(20 * time.Second)
	defer bound.Stop()
	for !ok(c.got) {
		select {
		case m, open := <-c.ch:
			if !open {
				c.t.Fatalf("watcher closed before %s; got %s", what, momentList(c.got))
			}
			c.got = append(c.got, m)
		case <-bound.C:
			c.t.Fatalf("no %s; got %s", what, momentList(c.got))
		}
	}
}

func countOf(ev contract.Event) func([]moment.Moment) int {
	return func(ms []moment.Moment) int {
		n := 0
		for _, m := range ms {
			if m.Event == ev {
				n++
			}
		}
		return n
	}
}

func momentList(ms []moment.Moment) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "\n  %s %v", m.Event, m.Summary)
		if m.Frame != nil {
			fmt.Fprintf(&b, " frame=%s", m.Frame.FrameID)
		}
		for _, d := range m.Degradations {
			fmt.Fprintf(&b, " %s:%s→%s", d.Capability, d.PreviousSupport, d.CurrentSupport)
		}
		for _, w := range m.Warnings {
			fmt.Fprintf(&b, " warning=%s", w.Code)
		}
	}
	return b.String()
}

func startTestWatcher(t *testing.T, o Options) *collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o.Tail.ForcePoll = true
	o.Tail.Poll = 20 * time.Millisecond
	w, err := Start(ctx, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); w.Wait() })
	return &collector{t: t, ch: w.moments}
}

// TestTelemetryMoments follows a hand-written Claude transcript and checks
// every receipt kind the watcher produces from it: the binding, the
// frames, pressure only on level changes, the compaction and its reset,
// warnings for unparsable lines, and provenance without any text.
func TestTelemetryMoments(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, testSID+".jsonl")
	writeLines(t, path,
		tUser("u1", "p1"),
		tAsst("m1", "tool_use", 60000), // 60 % of 100000: moderate
		`not json at all`,
		tAsst("m2", "end_turn", 80000), // 80 %: high
		tUser("u2", "p2"),
		tAsst("m3", "end_turn", 81000), // still high: no receipt
		tCompact(95000, 5000),          // reset to low
	)
	c := startTestWatcher(t, Options{
		Harness: claude.Harness{}, Path: path, FromStart: true,
		Env: []string{"HOME=" + dir, "CLAUDE_CODE_MAX_CONTEXT_TOKENS=100000"},
	})
	pressure := countOf(contract.EventContextPressureObserved)
	c.until("the compaction reset", func(ms []moment.Moment) bool { return pressure(ms) >= 3 })

	type want struct {
		event contract.Event
		frame string
		sum   map[string]any
	}
	wants := []want{
		{contract.EventSessionStarted, "", map[string]any{"binding": "harness_session_id", "source": "transcript", "line": int64(1)}},
		{contract.EventFrameOpening, "p1", map[string]any{"line": int64(1)}},
		{contract.EventFrameOpened, "p1", map[string]any{"line": int64(2)}},
		{contract.EventContextPressureObserved, "", map[string]any{"frame_id": "p1", "tokens": int64(60000), "window": int64(100000), "percent": 60.0, "level": "moderate", "previous_level": "low"}},
		{contract.EventContextPressureObserved, "", map[string]any{"frame_id": "p1", "tokens": int64(80000), "level": "high", "previous_level": "moderate", "line": int64(4)}},
		{contract.EventFrameEnding, "p1", map[string]any{"stop_reason": "end_turn"}},
		{contract.EventFrameEnded, "p1", map[string]any{"stop_reason": "end_turn", "line": int64(4)}},
		{contract.EventFrameOpening, "p2", nil},
		{contract.EventFrameOpened, "p2", nil},
		{contract.EventFrameEnding, "p2", nil},
		{contract.EventFrameEnded, "p2", nil},
		{contract.EventContextCompacted, "", map[string]any{"trigger": "auto", "pre_tokens": int64(95000), "post_tokens": int64(5000), "line": int64(7)}},
		{contract.EventContextPressureObserved, "", map[string]any{"tokens": int64(5000), "level": "low", "previous_level": "high", "reason": "compacted"}},
	}
	got := c.got
	// Order within one line is the parser's; compare as a sequence of
	// (event, frame) after dropping nothing: every moment is expected.
	if len(got) != len(wants) {
		t.Fatalf("got %d moments, want %d:%s", len(got), len(wants), momentList(got))
	}
	used := make([]bool, len(got))
	for _, w := range wants {
		found := false
		for i, m := range got {
			if used[i] || m.Event != w.event {
				continue
			}
			if w.frame != "" && (m.Frame == nil || m.Frame.FrameID != w.frame) {
				continue
			}
			match := true
			for k, v := range w.sum {
				if m.Summary[k] != v {
					match = false
				}
			}
			if match {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("no %s frame=%q %v in:%s", w.event, w.frame, w.sum, momentList(got))
		}
	}
	for _, m := range got {
		if m.Summary["path"] != path || m.Summary["source"] != "transcript" {
			t.Errorf("%s without provenance: %v", m.Event, m.Summary)
		}
		if strings.Contains(fmt.Sprint(m.Summary), "secret") {
			t.Errorf("%s summary carries transcript text: %v", m.Event, m.Summary)
		}
		if m.Event == contract.EventSessionStarted && m.HarnessSessionID != testSID {
			t.Errorf("binding carries harness session %q, want %s", m.HarnessSessionID, testSID)
		}
	}
	// The unparsable line is a warning on the next receipt (the high
	// pressure or the end of the turn, both from line 4).
	var warned []contract.Event
	for _, m := range got {
		for _, w := range m.Warnings {
			if w.Code == "telemetry_invalid_lines" {
				warned = append(warned, m.Event)
				if m.Summary["line"] != int64(4) {
					t.Errorf("warning on a receipt from line %v, want 4", m.Summary["line"])
				}
			}
		}
	}
	if len(warned) != 1 {
		t.Errorf("invalid line warned on %v, want exactly one receipt", warned)
	}
}

// TestTelemetryDegradation checks capability.degraded when no transcript
// appears within the bound, the recovery receipt when it appears, and the
// same pair when the file is deleted and written again.
func TestTelemetryDegradation(t *testing.T) {
	home := t.TempDir()
	cwd := filepath.Join(home, "proj")
	if err := os.MkdirAll(cwd, 0o700); err != nil {
		t.Fatal(err)
	}
	c := startTestWatcher(t, Options{
		Harness: claude.Harness{}, Env: []string{"HOME=" + home}, Cwd: cwd,
		LaunchedAt: time.Now(), NotFoundAfter: 50 * time.Millisecond,
	})
	degraded := countOf(contract.EventCapabilityDegraded)
	c.until("degradation", func(ms []moment.Moment) bool { return degraded(ms) >= 1 })
	checkDegradation(t, c.got[len(c.got)-1], contract.StatusDegraded, contract.SupportSynthesized, contract.SupportUnavailable, "source_not_found")

	projects := filepath.Join(home, ".claude", "projects", claude.ProjectDirName(cwd))
	if err := os.MkdirAll(projects, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(projects, testSID+".jsonl")
	writeLines(t, path, tUser("u1", "p1"))
	c.until("recovery", func(ms []moment.Moment) bool { return degraded(ms) >= 2 })
	rec := c.got[len(c.got)-1]
	checkDegradation(t, rec, "", contract.SupportUnavailable, contract.SupportSynthesized, "source_found")
	if rec.Summary["recovered"] != true || rec.Summary["path"] != path {
		t.Errorf("recovery summary %v", rec.Summary)
	}
	c.until("the frame", func(ms []moment.Moment) bool { return countOf(contract.EventFrameOpening)(ms) == 1 })

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	c.until("loss", func(ms []moment.Moment) bool { return degraded(ms) >= 3 })
	checkDegradation(t, c.got[len(c.got)-1], contract.StatusDegraded, contract.SupportSynthesized, contract.SupportUnavailable, "source_deleted")
	writeLines(t, path, tUser("u2", "p2"))
	c.until("second recovery", func(ms []moment.Moment) bool { return degraded(ms) >= 4 })
	checkDegradation(t, c.got[len(c.got)-1], "", contract.SupportUnavailable, contract.SupportSynthesized, "source_appeared")
}

func checkDegradation(t *testing.T, m moment.Moment, status contract.ReceiptStatus, prev, cur contract.SupportState, reason string) {
	t.Helper()
	if m.Event != contract.EventCapabilityDegraded || m.Status != status || m.Summary["reason"] != reason {
		t.Fatalf("got %s status %q reason %v, want capability.degraded %q %s", m.Event, m.Status, m.Summary["reason"], status, reason)
	}
	var caps []string
	for _, d := range m.Degradations {
		caps = append(caps, d.Capability)
		if d.PreviousSupport != prev || d.CurrentSupport != cur || d.Evidence == nil || *d.Evidence == "" || d.ObservedAtEpochS == nil {
			t.Errorf("%s: %s → %s (evidence %v), want %s → %s", d.Capability, d.PreviousSupport, d.CurrentSupport, d.Evidence, prev, cur)
		}
		if err := d.Validate(); err != nil {
			t.Errorf("invalid degradation: %v", err)
		}
		if status == contract.StatusDegraded && (d.RetryClass == nil || *d.RetryClass != contract.RetryAfterReread) {
			t.Errorf("%s retry class %v, want retry_after_reread", d.Capability, d.RetryClass)
		}
	}
	slices.Sort(caps)
	if !slices.Equal(caps, []string{"context_pressure", "telemetry"}) {
		t.Errorf("degraded capabilities %v", caps)
	}
}

// TestWatchConfigDefaults: the harness's source is used as it says, with
// the default bounds and levels; inverted levels are refused. Where each
// harness's files live is tested in its folder (TestTelemetrySource).
func TestWatchConfigDefaults(t *testing.T) {
	cfg, kind, err := Config(Options{Harness: codex.Harness{}, Env: []string{"HOME=/h"}, Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if kind != codex.SourceRollout || cfg.Discoverer == nil || cfg.NewParser == nil {
		t.Errorf("kind %q discoverer %v", kind, cfg.Discoverer)
	}
	if cfg.Within != DefaultNotFoundAfter || cfg.Levels != telemetry.DefaultLevels {
		t.Errorf("defaults: within %v levels %+v", cfg.Within, cfg.Levels)
	}
	if _, _, err := Config(Options{Harness: claude.Harness{}, Env: []string{"HOME=/h"}, Levels: telemetry.Levels{Moderate: 0.9, High: 0.5, Critical: 0.95}}); err == nil {
		t.Error("inverted levels accepted")
	}
}

// TestTelemetryUnavailable: a watcher that cannot be configured (no HOME in
// the harness's environment) does not stop the launch; the ledger gets
// one capability.degraded saying why.
func TestTelemetryUnavailable(t *testing.T) {
	o := Options{Harness: codex.Harness{}}
	_, err := Start(context.Background(), o)
	if err == nil {
		t.Fatal("watcher started without HOME or CODEX_HOME")
	}
	var got []moment.Moment
	for m := range Unavailable(o, err) {
		got = append(got, m)
	}
	if len(got) != 1 || got[0].Event != contract.EventCapabilityDegraded || got[0].Status != contract.StatusDegraded {
		t.Fatalf("got %s", momentList(got))
	}
	for _, d := range got[0].Degradations {
		if d.CurrentSupport != contract.SupportUnavailable || d.RetryClass == nil || *d.RetryClass != contract.RetryAfterReconfigure || !strings.Contains(*d.Evidence, "CODEX_HOME") {
			t.Errorf("%s: %s, retry %v, evidence %q", d.Capability, d.CurrentSupport, d.RetryClass, *d.Evidence)
		}
	}
}

// TestResumed: a launch continuing a session follows its file from its
// current end (by id, or the newest written for "latest"); a session
// that does not exist leaves the options as they were.
func TestResumed(t *testing.T) {
	home := t.TempDir()
	cwd := filepath.Join(home, "proj")
	projects := filepath.Join(home, ".claude", "projects", claude.ProjectDirName(cwd))
	if err := os.MkdirAll(projects, 0o700); err != nil {
		t.Fatal(err)
	}
	const other = "1a2b3c4d-0000-4000-8000-000000000002"
	older := filepath.Join(projects, other+".jsonl")
	writeLines(t, older, strings.ReplaceAll(tUser("u0", "p0"), testSID, other))
	path := filepath.Join(projects, testSID+".jsonl")
	writeLines(t, path, tUser("u1", "p1"), tAsst("m1", "end_turn", 1000))
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(older, old, old); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Harness: claude.Harness{}, Env: []string{"HOME=" + home}, Cwd: cwd, LaunchedAt: time.Now(), Follow: true}
	for _, id := range []string{testSID, ""} {
		got, ok, err := Resumed(o, id)
		if err != nil || !ok || got.Path != path || !got.FromStart || got.HistoryOffset != fi.Size() || !got.Follow {
			t.Errorf("Resumed(%q) = path %q from start %v offset %d follow %v, %v %v; want %s at %d", id, got.Path, got.FromStart, got.HistoryOffset, got.Follow, ok, err, path, fi.Size())
		}
	}
	if got, ok, err := Resumed(o, other); err != nil || !ok || got.Path != older {
		t.Errorf("Resumed(other) = %q %v %v", got.Path, ok, err)
	}
	if got, ok, err := Resumed(o, "9f9f9f9f-0000-4000-8000-000000000009"); err != nil || ok || got.Path != "" {
		t.Errorf("unknown session: %q %v %v", got.Path, ok, err)
	}
}
