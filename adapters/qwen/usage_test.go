package qwen

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// usageOf reads testdata/name through the usage parser.
func usageOf(t *testing.T, name string) []adapters.UsageEntry {
	t.Helper()
	path := filepath.Join("testdata", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := Harness{}.NewUsageParser(path, nil)
	var out []adapters.UsageEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for n := 1; sc.Scan(); n++ {
		if out, err = p.Parse(out, sc.Bytes()); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
	}
	return out
}

// mockCall is the mock's usage on the Anthropic wire in the recorded
// files (1200 input, 300 cache write, 4000 cache read, 77 output tokens)
// as Qwen Code records it: the cache write is in the prompt.
var mockCall = adapters.UsageTokens{Input: 1500, CacheRead: 4000, Output: 77}

// TestUsageRecordedTurn: the real 0.24.4 tool turn (offline, against
// the mock) is two calls, each the mock's usage, in its session and
// folder, once each.
func TestUsageRecordedTurn(t *testing.T) {
	got := usageOf(t, "qwen-usage-tool.jsonl")
	if len(got) != 2 {
		t.Fatalf("%d calls, want 2 (the tool call and the answer): %+v", len(got), got)
	}
	const sid = "b86aff2e-02f7-4153-8d23-a021b941d690"
	for _, e := range got {
		if e.Tokens != mockCall || e.Model != "claude-sonnet-4-5" || e.SessionID != sid || e.Project != "/home/dev/project" || e.At.IsZero() {
			t.Errorf("call %+v, want %+v of claude-sonnet-4-5 in session %s, /home/dev/project", e, mockCall, sid)
		}
	}
	if got[0].Key == "" || got[0].Key == got[1].Key {
		t.Errorf("keys %q and %q, want two identities", got[0].Key, got[1].Key)
	}
}

// TestUsageCountsSideAgents: the memory extractor Qwen Code runs after
// a turn makes a call of its own, recorded only as an api_response
// (no assistant record): it is counted beside the turn's.
func TestUsageCountsSideAgents(t *testing.T) {
	got := usageOf(t, "qwen-usage-memory.jsonl")
	if len(got) != 2 || got[0].Tokens != mockCall || got[1].Tokens != mockCall {
		t.Fatalf("calls %+v, want the answer's and the memory extractor's, each %+v", got, mockCall)
	}
}

// TestUsageRules: the counts of other wires (a total that includes
// the reasoning; none at all), lines that are no call, and a line that
// is not JSON.
func TestUsageRules(t *testing.T) {
	rec := func(ev string) string {
		return `{"uuid":"r","sessionId":"s","timestamp":"2026-12-03T07:18:28.922Z","type":"system","subtype":"ui_telemetry","cwd":"/p","systemPayload":{"uiEvent":` + ev + `}}`
	}
	for _, tt := range []struct {
		line string
		want []adapters.UsageTokens
		key  string
	}{
		// The OpenAI wire: completion_tokens (candidates) include the
		// reasoning; the total is the prompt and the completion.
		{rec(`{"event.name":"qwen-code.api_response","response_id":"x","model":"qwen3-coder-plus","input_token_count":1000,"cached_content_token_count":600,"output_token_count":50,"thoughts_token_count":20,"total_token_count":1050}`),
			[]adapters.UsageTokens{{Input: 400, CacheRead: 600, Output: 50, Reasoning: 20}}, "s:x"},
		// Gemini's wire: candidates without the thoughts, which the total has.
		{rec(`{"event.name":"qwen-code.api_response","response_id":"y","model":"gemini-2.5-pro","input_token_count":1000,"cached_content_token_count":0,"output_token_count":50,"thoughts_token_count":20,"total_token_count":1070}`),
			[]adapters.UsageTokens{{Input: 1000, Output: 70, Reasoning: 20}}, "s:y"},
		// No total: the output and the thoughts; no response id: the record's.
		{rec(`{"event.name":"qwen-code.api_response","model":"m","input_token_count":10,"output_token_count":5,"thoughts_token_count":2}`),
			[]adapters.UsageTokens{{Input: 10, Output: 7, Reasoning: 2}}, "s:r"},
		{rec(`{"event.name":"qwen-code.api_error","response_id":"z","model":"m","error":"api_response\"?"}`), nil, ""},
		{rec(`{"event.name":"qwen-code.tool_call","function_name":"x"}`), nil, ""},
		{`{"uuid":"u","sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"what is \"qwen-code.api_response\"?"}]}}`, nil, ""},
	} {
		got, err := Harness{}.NewUsageParser("f.jsonl", nil).Parse(nil, []byte(tt.line))
		if err != nil {
			t.Fatalf("%s: %v", tt.line, err)
		}
		var toks []adapters.UsageTokens
		for _, e := range got {
			toks = append(toks, e.Tokens)
			if e.Key != tt.key || e.SessionID != "s" || e.Project != "/p" {
				t.Errorf("%s: key %q session %q project %q, want %q, s, /p", tt.line, e.Key, e.SessionID, e.Project, tt.key)
			}
		}
		if !slices.Equal(toks, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.line, toks, tt.want)
		}
	}
	if _, err := (Harness{}).NewUsageParser("f.jsonl", nil).Parse(nil, []byte(`{"uuid":`)); err == nil {
		t.Error("a torn line read without error")
	}
}

// TestUsageFiles: the chat files under the runtime folder ($QWEN_HOME
// here), nothing else; none when the folder does not exist.
func TestUsageFiles(t *testing.T) {
	root := t.TempDir()
	chat := filepath.Join(root, "projects", "-home-dev-project", "chats", "s.jsonl")
	for _, p := range []string{chat, filepath.Join(root, "projects", "-home-dev-project", "meta.json"), filepath.Join(root, "usage_record.jsonl")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"QWEN_HOME": root, "HOME": "/nonexistent"}
	got, err := Harness{}.UsageFiles(func(k string) string { return env[k] })
	if err != nil || !slices.Equal(got, []string{chat}) {
		t.Errorf("UsageFiles = %q, %v; want %q", got, err, chat)
	}
	got, err = Harness{}.UsageFiles(func(k string) string { return map[string]string{"HOME": t.TempDir()}[k] })
	if err != nil || len(got) != 0 {
		t.Errorf("UsageFiles without ~/.qwen = %q, %v; want none", got, err)
	}
}
