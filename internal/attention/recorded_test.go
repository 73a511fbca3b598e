package attention

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/adapters/gemini"
	"github.com/lifeloop/lifeloop/adapters/opencode"
)

// The plug-ins whose attention mappings the recordings go through.
var (
	claudeReader   adapters.AttentionReader = claude.Harness{}
	codexReader    adapters.AttentionReader = codex.Harness{}
	geminiReader   adapters.AttentionReader = gemini.Harness{}
	openCodeReader adapters.AttentionReader = opencode.Harness{}
)

// recording is the path of a recorded file: it lives with its harness's
// plug-in, adapters/<harness>/testdata/attention/<harness>-….
func recording(name string) string {
	harness, _, _ := strings.Cut(name, "-")
	return filepath.Join("..", "..", "adapters", harness, "testdata", "attention", name)
}

// replayClaude feeds a recording of testdata (hook payloads, and the keys
// the recorder typed to answer a dialog) through the Claude plug-in's AttentionEvent into a
// tracker, as a reader without frame receipts would: turn boundaries come
// from the hooks. SessionEnd ends the tracker.
func replayClaude(t *testing.T, name string) (*Tracker, time.Time) {
	return replay(t, name, claudeReader.AttentionEvent)
}

// replay feeds a recording through mapping.
func replay(t *testing.T, name string, mapping func([]byte, time.Time) (Fact, bool)) (*Tracker, time.Time) {
	t.Helper()
	f, err := os.Open(recording(name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tr *Tracker
	var start time.Time
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			TMs   int64           `json:"t_ms"`
			Stdin json.RawMessage `json:"stdin"`
			Event json.RawMessage `json:"event"`
			Key   string          `json:"key"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		at := time.UnixMilli(line.TMs).UTC()
		if tr == nil {
			tr, start = NewTracker(at), at
		}
		if line.Key != "" {
			tr.Observe(Fact{At: at, Kind: KeyTyped, Source: SourceFrame, Evidence: "key:" + line.Key})
			continue
		}
		var ev struct {
			Event string `json:"hook_event_name"`
		}
		_ = json.Unmarshal(line.Stdin, &ev)
		if ev.Event == "SessionEnd" {
			tr.End(at)
			continue
		}
		payload := line.Stdin
		if payload == nil {
			payload = line.Event
		}
		if fact, ok := mapping(payload, at); ok {
			tr.Observe(fact)
		}
	}
	if tr == nil {
		t.Fatalf("%s is empty", name)
	}
	return tr, start
}

// wantEpisode is an episode of a golden: offsets from the recording's
// first line, to the millisecond; end -1 for an episode still open.
type wantEpisode struct {
	kind       State
	detail     string
	turn       int
	start, end int64 // ms from the first line
}

func checkEpisodes(t *testing.T, tr *Tracker, start time.Time, want []wantEpisode) {
	t.Helper()
	checkEpisodesFrom(t, tr, start, SourceHook, want)
}

// checkEpisodesFrom checks episodes whose source is src.
func checkEpisodesFrom(t *testing.T, tr *Tracker, start time.Time, src Source, want []wantEpisode) {
	t.Helper()
	eps := tr.Episodes()
	if len(eps) != len(want) {
		t.Fatalf("%d episodes, want %d: %+v", len(eps), len(want), eps)
	}
	for i, w := range want {
		e := eps[i]
		gs, ge := e.Start.Sub(start).Milliseconds(), e.End.Sub(start).Milliseconds()
		if e.Open() {
			ge = -1
		}
		if e.Kind != w.kind || e.Detail != w.detail || e.Turn != w.turn || gs != w.start || ge != w.end || e.Source != src {
			t.Errorf("episode %d: %s %q turn %d from %q at +%d..+%d ms, want %s %q turn %d from %q at +%d..+%d ms",
				i+1, e.Kind, e.Detail, e.Turn, e.Source, gs, ge, w.kind, w.detail, w.turn, src, w.start, w.end)
		}
	}
}

// TestRecordedClaudePermission: Claude 2.1.197, --permission-mode default,
// a tool call allowed after the permission notification, the idle
// notification after the turn, a second tool call denied with Escape.
func TestRecordedClaudePermission(t *testing.T) {
	tr, start := replayClaude(t, "claude-permission.hooks.jsonl")
	checkEpisodes(t, tr, start, goldenClaudePermission)
	if tr.Turn() != 2 || tr.Current().State != Unknown {
		t.Errorf("turns %d, state %s after SessionEnd", tr.Turn(), tr.Current().State)
	}
}

// TestRecordedClaudeStopFailure: the model endpoint answered 429, then
// 500; each turn ended in StopFailure with its error kind.
func TestRecordedClaudeStopFailure(t *testing.T) {
	tr, start := replayClaude(t, "claude-stopfailure.hooks.jsonl")
	checkEpisodes(t, tr, start, goldenClaudeStopFailure)
}

// TestRecordedCodexSandboxDenied: Codex 0.169 with approval on-request and
// a read-only sandbox asked nothing: the sandbox refused the tool call and
// the turn ended (the keys typed after each turn answered no dialog).
func TestRecordedCodexSandboxDenied(t *testing.T) {
	tr, start := replay(t, "codex-sandbox-denied.hooks.jsonl", codexReader.AttentionEvent)
	checkEpisodes(t, tr, start, goldenCodexSandboxDenied)
}

// TestRecordedGeminiPermission: Gemini CLI 0.61 in its default approval
// mode, a `touch` allowed with Enter, a second denied with Escape (no hook
// follows that denial, not even AfterAgent).
func TestRecordedGeminiPermission(t *testing.T) {
	tr, start := replay(t, "gemini-permission.hooks.jsonl", geminiReader.AttentionEvent)
	checkEpisodes(t, tr, start, goldenGeminiPermission)
}

// TestRecordedScreens: the screens recorded up to the first answer show
// each harness's permission dialog to its screen rules.
func TestRecordedScreens(t *testing.T) {
	for name, rules := range map[string][]ScreenRule{"claude-permission.screen.txt": claudeReader.AttentionScreen(), "gemini-permission.screen.txt": geminiReader.AttentionScreen(), "opencode-permission.screen.txt": openCodeReader.AttentionScreen()} {
		b, err := os.ReadFile(recording(name))
		if err != nil {
			t.Fatal(err)
		}
		if f, ok := MatchScreen(rules, string(b), t0); !ok || f.State != NeedsPermission {
			t.Errorf("%s: no permission dialog found", name)
		}
	}
}

// TestRecordedOpenCodePermission: OpenCode 1.18.33 with bash set to ask,
// its bus events from a plugin: a `touch` allowed with Enter, a second
// rejected with Escape (permission.replied "reject"). Its events name no
// turn start, so turns come from frames (all episodes are turn 0 here);
// nothing ends the recording's last episode.
func TestRecordedOpenCodePermission(t *testing.T) {
	tr, start := replay(t, "opencode-permission.events.jsonl", openCodeReader.AttentionEvent)
	checkEpisodes(t, tr, start, goldenOpenCodePermission)
}

// TestRecordedErrors: each TUI's model endpoint answered 429. Codex: no
// hook after the prompt; its rollout's task_complete carries the error.
// OpenCode: five retries (session.status retry), then session.error.
// Gemini CLI: 20 s later, and again 7 minutes later (22 model requests),
// it was still retrying and no hook had said a thing: the session looks
// busy.
func TestRecordedErrors(t *testing.T) {
	tr, start := replay(t, "codex-error.hooks.jsonl", codexReader.AttentionEvent)
	if len(tr.Episodes()) != 0 || tr.Current().State != Working || tr.Turn() != 1 {
		t.Fatalf("codex hooks alone: %+v %+v", tr.Current(), tr.Episodes())
	}
	b, err := os.ReadFile(recording("codex-error.rollout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f, ok := codexReader.AttentionRecord(bytes.TrimSpace(b))
	if !ok {
		t.Fatal("the rollout's task_complete maps to nothing")
	}
	tr.Observe(f)
	checkEpisodesFrom(t, tr, start, SourceTranscript, []wantEpisode{{StoppedOnError, "response_too_many_failed_attempts (429)", 1, f.At.Sub(start).Milliseconds(), -1}})
	if d := f.At.Sub(start); d < 0 || d > 5*time.Second {
		t.Errorf("the rollout's error is %v after the first hook", d)
	}

	tr, start = replay(t, "opencode-error.events.jsonl", openCodeReader.AttentionEvent)
	checkEpisodes(t, tr, start, goldenOpenCodeError)

	for _, name := range []string{"gemini-error.hooks.jsonl", "gemini-error-end.hooks.jsonl"} {
		tr, _ = replay(t, name, geminiReader.AttentionEvent)
		if len(tr.Episodes()) != 0 || tr.Current().State != Working {
			t.Errorf("%s: %+v %+v", name, tr.Current(), tr.Episodes())
		}
	}
}

// TestRecordedClaudeTranscriptError: the transcript of the StopFailure
// recording says the same errors (source transcript), 40 ms before the
// hook is called. Merged with the hooks by time, each episode opens on the
// transcript's line (its start, its detail with the HTTP status) and the
// hook then takes it over as the more trusted source; there are no more
// episodes than the hooks alone give.
func TestRecordedClaudeTranscriptError(t *testing.T) {
	b, err := os.ReadFile(recording("claude-stopfailure.transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var facts []Fact
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f, ok := claudeReader.AttentionRecord(l); ok {
			facts = append(facts, f)
		}
	}
	if len(facts) != 2 || facts[0].Detail != "rate_limit (429)" || facts[1].Detail != "server_error (500)" || facts[0].State != StoppedOnError {
		t.Fatalf("transcript facts %+v", facts)
	}
	tr, start := replayClaude(t, "claude-stopfailure.hooks.jsonl")
	hookEps := tr.Episodes()
	// Replay again with the transcript's facts merged in time order.
	merged := NewTracker(start)
	var all []Fact
	data, _ := os.ReadFile(recording("claude-stopfailure.hooks.jsonl"))
	for _, l := range bytes.Split(data, []byte("\n")) {
		var line struct {
			TMs   int64           `json:"t_ms"`
			Stdin json.RawMessage `json:"stdin"`
		}
		if json.Unmarshal(l, &line) != nil {
			continue
		}
		if f, ok := claudeReader.AttentionEvent(line.Stdin, time.UnixMilli(line.TMs).UTC()); ok {
			all = append(all, f)
		}
	}
	all = append(all, facts...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].At.Before(all[j].At) })
	for _, f := range all {
		merged.Observe(f)
	}
	eps := merged.Episodes()
	if len(eps) != len(hookEps) {
		t.Fatalf("merged episodes %+v, hooks alone %+v", eps, hookEps)
	}
	for i := range eps {
		if eps[i].Kind != StoppedOnError || eps[i].Source != SourceHook || eps[i].Detail != facts[i].Detail ||
			!eps[i].Start.Equal(facts[i].At) || !facts[i].At.Before(hookEps[i].Start) {
			t.Errorf("merged episode %d: %+v (hooks alone: %+v)", i+1, eps[i], hookEps[i])
		}
	}
}
