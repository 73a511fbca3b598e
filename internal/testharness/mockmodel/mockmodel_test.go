package mockmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

type event struct {
	Name string
	Data map[string]any
}

// post sends body to path and returns the status, content type and the
// parsed SSE events (or the raw JSON body when not a stream).
func post(t *testing.T, s *Server, path, body string) (int, []event, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		b, _ := io.ReadAll(resp.Body)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("body %q: %v", b, err)
		}
		return resp.StatusCode, nil, m
	}
	var evs []event
	sc := bufio.NewScanner(resp.Body)
	var name string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			var m map[string]any
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &m); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
			if m["type"] != name {
				t.Errorf("event %q carries type %v", name, m["type"])
			}
			evs = append(evs, event{name, m})
		}
	}
	return resp.StatusCode, evs, nil
}

func names(evs []event) string {
	var n []string
	for _, e := range evs {
		n = append(n, e.Name)
	}
	return strings.Join(n, ",")
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

const claudeTools = `"tools":[{"name":"Bash","input_schema":{"type":"object"}}]`

func TestAnthropicStream(t *testing.T) {
	tests := []struct {
		name       string
		messages   string
		wantEvents string
		wantStop   string
		wantText   string
		wantJSON   string
	}{
		{
			name:       "plain text",
			messages:   `[{"role":"user","content":"hello"}]`,
			wantEvents: "message_start,content_block_start,ping,content_block_delta,content_block_delta,content_block_stop,message_delta,message_stop",
			wantStop:   "end_turn",
			wantText:   "plain reply",
		},
		{
			name:       "trigger asks for a tool",
			messages:   `[{"role":"user","content":[{"type":"text","text":"<system-reminder>x</system-reminder>"},{"type":"text","text":"please RUN_TOOL now"}]}]`,
			wantEvents: "message_start,content_block_start,ping,content_block_delta,content_block_stop,message_delta,message_stop",
			wantStop:   "tool_use",
			wantJSON:   `{"command":"echo hi","description":"mock tool call"}`,
		},
		{
			name: "tool result gets the tool reply",
			messages: `[{"role":"user","content":"RUN_TOOL"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hi"}]}]`,
			wantEvents: "message_start,content_block_start,ping,content_block_delta,content_block_delta,content_block_stop,message_delta,message_stop",
			wantStop:   "end_turn",
			wantText:   "after tool",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Config{Reply: "plain reply", ToolReply: "after tool", Usage: Usage{InputTokens: 100, CacheCreationInputTokens: 20, CacheReadInputTokens: 30, OutputTokens: 7}})
			status, evs, _ := post(t, s, "/v1/messages?beta=true", `{"model":"claude-x","stream":true,`+claudeTools+`,"messages":`+tc.messages+`}`)
			if status != 200 {
				t.Fatalf("status %d", status)
			}
			if got := names(evs); got != tc.wantEvents {
				t.Fatalf("events %s, want %s", got, tc.wantEvents)
			}
			msg := evs[0].Data["message"].(map[string]any)
			if msg["model"] != "claude-x" {
				t.Errorf("model %v", msg["model"])
			}
			u := msg["usage"].(map[string]any)
			if num(u["input_tokens"]) != 100 || num(u["cache_creation_input_tokens"]) != 20 || num(u["cache_read_input_tokens"]) != 30 {
				t.Errorf("message_start usage %v", u)
			}
			md := evs[len(evs)-2].Data
			if got := md["delta"].(map[string]any)["stop_reason"]; got != tc.wantStop {
				t.Errorf("stop_reason %v, want %s", got, tc.wantStop)
			}
			if got := num(md["usage"].(map[string]any)["output_tokens"]); got != 7 {
				t.Errorf("message_delta output_tokens %d", got)
			}
			var text, js string
			for _, e := range evs {
				if e.Name != "content_block_delta" {
					continue
				}
				d := e.Data["delta"].(map[string]any)
				if s, ok := d["text"].(string); ok {
					text += s
				}
				if s, ok := d["partial_json"].(string); ok {
					js += s
				}
			}
			if text != tc.wantText || js != tc.wantJSON {
				t.Errorf("text %q json %q, want %q %q", text, js, tc.wantText, tc.wantJSON)
			}
			if tc.wantJSON != "" {
				cb := evs[1].Data["content_block"].(map[string]any)
				if cb["type"] != "tool_use" || cb["name"] != "Bash" {
					t.Errorf("content_block %v", cb)
				}
			}
		})
	}
}

func TestAnthropicNonStreamingAndSideRequests(t *testing.T) {
	s := start(t, Config{Reply: "r", UsageSequence: []Usage{{InputTokens: 1, OutputTokens: 1}}, Usage: Usage{InputTokens: 9, OutputTokens: 9}})
	// A side request (no tools) must not consume the usage sequence.
	_, _, side := post(t, s, "/v1/messages", `{"model":"m","messages":[{"role":"user","content":"title please RUN_TOOL"}]}`)
	if side["stop_reason"] != "end_turn" || side["content"].([]any)[0].(map[string]any)["text"] != "r" {
		t.Errorf("side reply %v", side)
	}
	_, _, main := post(t, s, "/v1/messages", `{"model":"m",`+claudeTools+`,"messages":[{"role":"user","content":"RUN_TOOL"}]}`)
	block := main["content"].([]any)[0].(map[string]any)
	if main["stop_reason"] != "tool_use" || block["name"] != "Bash" || block["input"].(map[string]any)["command"] != "echo hi" {
		t.Errorf("tool reply %v", main)
	}
	if got := num(main["usage"].(map[string]any)["input_tokens"]); got != 1 {
		t.Errorf("first conversation response input_tokens %d, want 1 (sequence)", got)
	}
	_, _, next := post(t, s, "/v1/messages", `{"model":"m",`+claudeTools+`,"messages":[{"role":"user","content":"x"}]}`)
	if got := num(next["usage"].(map[string]any)["input_tokens"]); got != 9 {
		t.Errorf("after the sequence input_tokens %d, want 9", got)
	}
	status, _, ct := post(t, s, "/v1/messages/count_tokens", `{"messages":[]}`)
	if status != 200 || num(ct["input_tokens"]) != 9 {
		t.Errorf("count_tokens %d %v", status, ct)
	}
	kinds := []string{}
	for _, r := range s.Requests() {
		kinds = append(kinds, r.Kind)
	}
	if got := strings.Join(kinds, ","); got != "claude-side,claude,claude,count_tokens" {
		t.Errorf("kinds %s", got)
	}
}

const codexTools = `"tools":[{"type":"function","name":"exec_command"}]`

func TestResponsesStream(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantItem  string
		wantText  string
		wantDelta bool
	}{
		{"plain", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"hello"}]}]`, "message", "plain reply", true},
		{"trigger", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"RUN_TOOL please"}]},{"type":"message","role":"developer","content":[{"type":"input_text","text":"hook context"}]}]`, "function_call", "", false},
		{"tool output", `[{"type":"message","role":"user","content":[{"type":"input_text","text":"RUN_TOOL"}]},{"type":"function_call","call_id":"c1","name":"exec_command","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"hi"}]`, "message", "after tool", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Config{Reply: "plain reply", ToolReply: "after tool",
				UsageSequence: []Usage{{InputTokens: 1000, CacheReadInputTokens: 400, OutputTokens: 50, ReasoningTokens: 10}}})
			status, evs, _ := post(t, s, "/v1/responses", `{"model":"mock-model","stream":true,`+codexTools+`,"input":`+tc.input+`}`)
			if status != 200 {
				t.Fatalf("status %d", status)
			}
			if evs[0].Name != "response.created" || evs[1].Name != "response.output_item.added" || evs[len(evs)-1].Name != "response.completed" || evs[len(evs)-2].Name != "response.output_item.done" {
				t.Fatalf("events %s", names(evs))
			}
			var text string
			for _, e := range evs {
				if e.Name == "response.output_text.delta" {
					text += e.Data["delta"].(string)
				}
			}
			if text != tc.wantText {
				t.Errorf("text %q want %q", text, tc.wantText)
			}
			item := evs[len(evs)-2].Data["item"].(map[string]any)
			if item["type"] != tc.wantItem {
				t.Errorf("item %v", item)
			}
			if tc.wantItem == "function_call" && (item["name"] != "exec_command" || item["arguments"] != `{"cmd":"echo hi"}` || item["call_id"] == "") {
				t.Errorf("function_call %v", item)
			}
			u := evs[len(evs)-1].Data["response"].(map[string]any)["usage"].(map[string]any)
			if num(u["input_tokens"]) != 1000 || num(u["output_tokens"]) != 50 || num(u["total_tokens"]) != 1050 ||
				num(u["input_tokens_details"].(map[string]any)["cached_tokens"]) != 400 ||
				num(u["output_tokens_details"].(map[string]any)["reasoning_tokens"]) != 10 {
				t.Errorf("usage %v", u)
			}
		})
	}
}

func TestPreflightUnknownAndRecording(t *testing.T) {
	s := start(t, Config{})
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodHead, s.URL()+"/", nil)
	req.Header.Set("X-Claude-Code-Session-Id", "sess-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HEAD / status %d", resp.StatusCode)
	}
	status, _, body := post(t, s, "/api/whatever?x=1", `{"a":1}`)
	if status != 404 || body["type"] != "error" {
		t.Errorf("unknown path: %d %v", status, body)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	if reqs[0].Method != "HEAD" || reqs[0].Kind != "preflight" || reqs[0].Header.Get("X-Claude-Code-Session-Id") != "sess-1" {
		t.Errorf("first request %+v", reqs[0])
	}
	if reqs[1].Path != "/api/whatever" || reqs[1].Query != "x=1" || string(reqs[1].Body) != `{"a":1}` || reqs[1].Kind != "unknown" {
		t.Errorf("second request %+v", reqs[1])
	}
	reqs[1].Body[0] = 'X'
	if s.Requests()[1].Body[0] != '{' {
		t.Error("Requests does not return a copy")
	}
}

func TestStartRejectsNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "example.com:0", "nonsense"} {
		t.Run(addr, func(t *testing.T) {
			if s, err := Start(Config{Addr: addr}); err == nil {
				s.Close()
				t.Fatalf("Start(%q) succeeded", addr)
			}
		})
	}
}

func TestConcurrentUsageSequence(t *testing.T) {
	const n = 20
	seq := make([]Usage, n)
	for i := range seq {
		seq[i] = Usage{InputTokens: i + 1, OutputTokens: 1}
	}
	s := start(t, Config{UsageSequence: seq})
	var wg sync.WaitGroup
	seen := make(chan int, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+"/v1/messages", strings.NewReader(`{"model":"m",`+claudeTools+`,"messages":[{"role":"user","content":"x"}]}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			seen <- num(m["usage"].(map[string]any)["input_tokens"])
		}()
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for v := range seen {
		if got[v] {
			t.Errorf("usage entry %d served twice", v)
		}
		got[v] = true
	}
	if len(got) != n {
		t.Errorf("%d distinct usage entries served, want %d", len(got), n)
	}
}

// TestBodyLog: with BodyLog every request is one JSON line carrying its
// kind, path and body (as JSON when it is JSON).
func TestBodyLog(t *testing.T) {
	var log bytes.Buffer
	s, err := Start(Config{BodyLog: &log})
	if err != nil {
		t.Fatal(err)
	}
	post(t, s, "/v1/messages", `{"model":"m","stream":true,"messages":[{"role":"user","content":"MARKER-77"}]}`)
	post(t, s, "/nowhere", `not json`)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("body log: %q", log.String())
	}
	var first struct {
		Kind, Path string
		Body       struct {
			Messages []struct{ Content string }
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || !strings.HasPrefix(first.Kind, "claude") || first.Path != "/v1/messages" ||
		len(first.Body.Messages) != 1 || first.Body.Messages[0].Content != "MARKER-77" {
		t.Errorf("first line %s (%v)", lines[0], err)
	}
	if !strings.Contains(lines[1], `"body":"not json"`) {
		t.Errorf("second line %s", lines[1])
	}
}
