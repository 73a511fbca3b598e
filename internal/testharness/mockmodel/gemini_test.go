package mockmodel

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// postGemini sends body to path and returns the status and the data of
// every SSE event (or the one JSON body).
func postGemini(t *testing.T, s *Server, path, body string) (int, []map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]any
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, append(out, m)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte(d), &m); err != nil {
				t.Fatalf("data line %q: %v", line, err)
			}
			out = append(out, m)
		}
	}
	return resp.StatusCode, out
}

func geminiText(resps []map[string]any) string {
	var b strings.Builder
	for _, r := range resps {
		for _, p := range dig(r, "candidates", 0, "content", "parts").([]any) {
			if s, ok := p.(map[string]any)["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

// dig walks maps by string keys and slices by int indexes.
func dig(v any, path ...any) any {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			s, _ := v.([]any)
			if k >= len(s) {
				return nil
			}
			v = s[k]
		}
	}
	return v
}

const geminiStream = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"

func TestGeminiStreamTextToolAndUsage(t *testing.T) {
	s := start(t, Config{Reply: "plain answer", ToolReply: "after the tool", UsageSequence: []Usage{
		{InputTokens: 900, CacheReadInputTokens: 100, OutputTokens: 7, ReasoningTokens: 3},
		{InputTokens: 2000, OutputTokens: 9},
	}, Usage: Usage{InputTokens: 5, OutputTokens: 1}})
	tools := `"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]`

	// A plain prompt: text split over chunks, usage and finishReason on
	// the last one only.
	code, resps := postGemini(t, s, geminiStream+"?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"hello"}]}],`+tools+`}`)
	if code != 200 || len(resps) != 2 || geminiText(resps) != "plain answer" {
		t.Fatalf("status %d, %d chunks, text %q", code, len(resps), geminiText(resps))
	}
	if resps[0]["usageMetadata"] != nil || dig(resps[0], "candidates", 0, "finishReason") != nil {
		t.Errorf("first chunk carries the end: %v", resps[0])
	}
	if got := resps[1]["usageMetadata"].(map[string]any); got["promptTokenCount"] != 1000.0 || got["cachedContentTokenCount"] != 100.0 ||
		got["candidatesTokenCount"] != 7.0 || got["thoughtsTokenCount"] != 3.0 || got["totalTokenCount"] != 1010.0 {
		t.Errorf("usage %v", got)
	}

	// The trigger asks for the shell tool.
	_, resps = postGemini(t, s, geminiStream+"?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"<session_context>x</session_context>"},{"text":"please RUN_TOOL"}]}],`+tools+`}`)
	if len(resps) != 1 || dig(resps[0], "candidates", 0, "content", "parts", 0, "functionCall", "name") != "run_shell_command" ||
		dig(resps[0], "candidates", 0, "content", "parts", 0, "functionCall", "args", "command") != DefaultToolCommand {
		t.Fatalf("tool turn %v", resps)
	}
	if dig(resps[0], "usageMetadata", "promptTokenCount") != 2000.0 {
		t.Errorf("second usage %v", resps[0]["usageMetadata"])
	}

	// The tool's result comes back: ToolReply, usage from Config.Usage.
	_, resps = postGemini(t, s, geminiStream+"?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"please RUN_TOOL"}]},`+
		`{"role":"model","parts":[{"functionCall":{"name":"run_shell_command","args":{}}}]},`+
		`{"role":"user","parts":[{"functionResponse":{"name":"run_shell_command","response":{"output":"hi"}}}]}],`+tools+`}`)
	if geminiText(resps) != "after the tool" || dig(resps[len(resps)-1], "usageMetadata", "promptTokenCount") != 5.0 {
		t.Errorf("after tool: %q %v", geminiText(resps), resps)
	}
	if n := len(s.RequestsOfKind(KindGemini)); n != 3 {
		t.Errorf("%d conversation requests, want 3", n)
	}
}

func TestGeminiSideRequests(t *testing.T) {
	s := start(t, Config{Reply: "summary text", UsageSequence: []Usage{{InputTokens: 77}}})
	// The router wants JSON with a complexity score.
	code, resps := postGemini(t, s, "/v1beta/models/gemini-3.5-flash-lite:generateContent",
		`{"contents":[{"role":"user","parts":[{"text":"route me"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{}}}`)
	var routed map[string]any
	if code != 200 || json.Unmarshal([]byte(geminiText(resps)), &routed) != nil || routed["complexity_score"] != 50.0 {
		t.Fatalf("router answer %d %v", code, resps)
	}
	// A compression summary is plain text.
	_, resps = postGemini(t, s, "/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[{"role":"user","parts":[{"text":"summarise"}]}]}`)
	if geminiText(resps) != "summary text" {
		t.Errorf("summary %v", resps)
	}
	// A stream without tools is a side request and keeps the sequence.
	_, _ = postGemini(t, s, geminiStream+"?alt=sse", `{"contents":[{"role":"user","parts":[{"text":"title"}]}]}`)
	_, resps = postGemini(t, s, "/v1beta/models/gemini-2.5-flash:countTokens", `{"contents":[]}`)
	if resps[0]["totalTokens"] != float64(DefaultUsage.InputTokens) {
		t.Errorf("countTokens %v", resps)
	}
	if n := len(s.RequestsOfKind(KindGeminiSide)); n != 3 {
		t.Errorf("%d side requests, want 3", n)
	}
	if len(s.RequestsOfKind(KindGeminiCount)) != 1 || s.nextUsage().InputTokens != 77 {
		t.Error("side requests consumed the usage sequence")
	}
}
