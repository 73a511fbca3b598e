package gemini

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// readLines reads a chat file written by the real Gemini CLI 0.61.0
// against the mock model (testdata/).
func readLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

func TestParserRealFiles(t *testing.T) {
	const (
		w = " window=524288"
		a = "frame=b7e0d427-9fc6-4cc3-b7ce-7169753006e7#ac6c0a186cbd"
		b = "frame=04bad927-0c28-44ad-97cb-18a5dc697886#7e0502de8d86"
		c = "frame=04bad927-0c28-44ad-97cb-18a5dc697886#87063ceb732c"
	)
	tests := []struct {
		file string
		want []string // a prefix of the observations
		n    int      // how many in all
	}{
		{
			// A headless tool turn: the model record is written twice
			// (with its tokens, then with its toolCalls); usage once.
			file: "gemini-tool-turn.chat.jsonl", n: 6,
			want: []string{
				"harness_session id=b7e0d427-9fc6-4cc3-b7ce-7169753006e7",
				"frame_opening " + a,
				"frame_opened " + a + w,
				"usage " + a + " tokens=10666" + w,
				"usage " + a + " tokens=10761" + w,
				"frame_ended " + a + " trigger=answer",
			},
		},
		{
			// A TUI: the SessionStart hook's context is its own user record
			// (no frame); the second prompt was preceded by a compression
			// (900 005 tokens → the next response's 11 154).
			file: "gemini-compress-tui.chat.jsonl", n: 20,
			want: []string{
				"harness_session id=04bad927-0c28-44ad-97cb-18a5dc697886",
				"frame_opening " + b,
				"frame_opened " + b + w,
				"usage " + b + " tokens=900005" + w,
				"frame_ended " + b + " trigger=answer",
				"frame_opening " + c + w,
				"frame_opened " + c + w,
				"compacted" + w + " trigger=auto pre=900005 post=11154",
				"usage " + c + " tokens=11154" + w,
				"frame_ended " + c + " trigger=answer",
			},
		},
		{
			// A resumed session: a second header and the history again
			// ($set messages), the same session id: no second binding.
			file: "gemini-resume.chat.jsonl", n: 9,
			want: []string{
				"harness_session id=8873e905-f8a9-4c94-8046-52678b8420d3",
				"frame_opening frame=8873e905-f8a9-4c94-8046-52678b8420d3#412922249a06",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, errs := telemetrytest.ParseAll(t, NewParser(0), readLines(t, tt.file))
			if errs != 0 || len(got) != tt.n || !slices.Equal(got[:len(tt.want)], tt.want) {
				t.Errorf("errs %d, got %d observations:\n%s\nwant prefix:\n%s", errs, len(got), strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestParserRules(t *testing.T) {
	const head = `{"sessionId":"s-1","projectHash":"h","startTime":"2026-11-23T13:46:35.419Z","lastUpdated":"2026-11-23T13:46:35.419Z","kind":"main"}`
	user := func(id, content string) string {
		return `{"id":"` + id + `","timestamp":"2026-11-23T13:46:36.073Z","type":"user","content":` + content + `}`
	}
	model := func(id, content, extra string) string {
		return `{"id":"` + id + `","timestamp":"2026-11-23T13:46:36.954Z","type":"gemini","content":` + content +
			`,"thoughts":[],"tokens":{"input":100,"output":5,"cached":0,"thoughts":0,"tool":0,"total":105},"model":"gemma-4-31b-it"` + extra + `}`
	}
	got, errs := telemetrytest.ParseAll(t, NewParser(0.8), []string{
		head,
		`not json`,
		user("h1", `[{"text":"<hook_context>from a hook</hook_context>"}]`),
		user("u1", `[{"text":"first"}]`),
		// Text with a function call: read as the end (the toolCalls come
		// later), usage of the same record not repeated.
		model("m1", `"Let me look."`, ``),
		`{"$set":{"lastUpdated":"2026-11-23T13:46:36.954Z"}}`,
		model("m1", `"Let me look."`, `,"toolCalls":[{"id":"c1","name":"ls"}]`),
		user("r1", `[{"functionResponse":{"id":"c1","name":"ls","response":{"output":"x"}}}]`),
		user("u2", `[{"text":"second"}]`),
		model("m2", `""`, `,"toolCalls":[{"id":"c2","name":"ls"}]`),
		user("u3", `[{"text":"third"}]`),
		`{"$set":{"sessionId":"s-2"}}`,
		`{"$rewindTo":"u3"}`,
		`{"id":"i1","timestamp":"2026-11-23T13:46:37.000Z","type":"info","content":"Context compressed from 86% to 3%."}`,
		`{"sessionId":"sub","projectHash":"h","startTime":"2026-11-23T13:46:35.419Z","kind":"subagent"}`,
	})
	want := []string{
		"harness_session id=s-1",
		"frame_opening frame=u1",
		"frame_opened frame=u1 window=204800",
		"usage frame=u1 tokens=105 window=204800",
		"frame_ended frame=u1 trigger=answer",
		"frame_opening frame=u2 window=204800",
		"frame_opened frame=u2 window=204800",
		"usage frame=u2 tokens=105 window=204800",
		"frame_ended frame=u2 trigger=interrupted",
		"frame_opening frame=u3 window=204800",
		"harness_session id=s-2",
	}
	r := strings.NewReplacer("frame=u1", "frame="+PromptFrameID("s-1", "first"), "frame=u2", "frame="+PromptFrameID("s-1", "second"),
		"frame=u3", "frame="+PromptFrameID("s-1", "third"))
	for i := range want {
		want[i] = r.Replace(want[i])
	}
	if errs != 1 || !slices.Equal(got, want) {
		t.Errorf("errs %d, got:\n%s\nwant:\n%s", errs, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestWindow(t *testing.T) {
	for _, tt := range []struct {
		model     string
		threshold float64
		want      int64
	}{
		{"gemini-2.5-flash", 0, 524288},
		{"gemini-3-pro-preview", 1, 1048576},
		{"gemma-4-26b-a4b-it", 0.5, 128000},
		{"gemini-2.5-pro", 0.2, 209715},
	} {
		p := NewParser(tt.threshold)
		p.model = tt.model
		if got := p.window(); got != tt.want {
			t.Errorf("%s × %v: window %d, want %d", tt.model, tt.threshold, got, tt.want)
		}
	}
}

func TestHasCallsAndIsPrompt(t *testing.T) {
	for raw, want := range map[string]bool{``: false, `null`: false, `[]`: false, `[ ]`: false, `[{"id":"c1"}]`: true} {
		if got := hasCalls([]byte(raw)); got != want {
			t.Errorf("hasCalls(%q) = %v", raw, got)
		}
	}
	for raw, want := range map[string]bool{
		`[{"text":"say \"functionResponse\" please"}]`:                 true,
		`[{"functionResponse":{"id":"c1","response":{"output":"x"}}}]`: false,
		`"plain"`: true, `"  "`: false, `[{"text":"<hook_context>x</hook_context>"}]`: false,
	} {
		if got := isPrompt([]byte(raw)); got != want {
			t.Errorf("isPrompt(%s) = %v", raw, got)
		}
	}
}

// TestParserAndHooksNameTurnsAlike: for the same real sessions, the
// frames the chat file's parser names are exactly the frames the
// BeforeAgent and AfterAgent hooks name, in order.
func TestParserAndHooksNameTurnsAlike(t *testing.T) {
	for _, name := range []string{"gemini-tool-turn", "gemini-compress-tui"} {
		got, _ := telemetrytest.ParseAll(t, NewParser(0), readLines(t, name+".chat.jsonl"))
		var parsed []string
		for _, g := range got {
			if f, ok := strings.CutPrefix(g, "frame_opening frame="); ok {
				parsed = append(parsed, strings.Fields(f)[0])
			}
		}
		var hooked []string
		for _, line := range readLines(t, name+".hooks.jsonl") {
			var in hooks.Input
			if err := json.Unmarshal([]byte(line), &in); err != nil {
				t.Fatal(err)
			}
			if in.HookEventName == "BeforeAgent" {
				hooked = append(hooked, frameID(in))
			}
		}
		if len(parsed) == 0 || !slices.Equal(parsed, hooked) {
			t.Errorf("%s: chat-file frames %v, hook frames %v", name, parsed, hooked)
		}
	}
}

func TestRepeatedPromptsGetTheirOwnFrames(t *testing.T) {
	head := `{"sessionId":"s","projectHash":"h","startTime":"2026-11-23T13:46:35.419Z","kind":"main"}`
	user := func(id string) string {
		return `{"id":"` + id + `","timestamp":"2026-11-23T13:46:36.073Z","type":"user","content":[{"text":"yes"},{"text":"<hook_context>c</hook_context>"}],"displayContent":[{"text":"yes"}]}`
	}
	got, _ := telemetrytest.ParseAll(t, NewParser(0), []string{head, user("u1"), user("u1"), user("u2"), user("u3")})
	id := PromptFrameID("s", "yes")
	want := []string{"harness_session id=s", "frame_opening frame=" + id,
		"frame_ended frame=" + id + " trigger=interrupted", "frame_opening frame=" + id + ".2",
		"frame_ended frame=" + id + ".2 trigger=interrupted", "frame_opening frame=" + id + ".3"}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
