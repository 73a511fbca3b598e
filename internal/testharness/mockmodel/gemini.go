package mockmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// The Gemini API (generativelanguage v1beta) as Gemini CLI calls it with
// GOOGLE_GEMINI_BASE_URL pointing here:
//
//   - POST /v1beta/models/{model}:streamGenerateContent?alt=sse is a
//     conversation turn when the request offers tools (Kind "gemini"; it
//     consumes one UsageSequence entry), a side request otherwise
//     ("gemini-side").
//   - POST /v1beta/models/{model}:generateContent is a side request
//     ("gemini-side"): the model router (a JSON answer with a
//     complexity score), session titles, and the two calls of a history
//     compression, whose summary text is Config.Reply.
//   - POST /v1beta/models/{model}:countTokens ("gemini-count") answers
//     {"totalTokens": Config.Usage prompt tokens}.
//
// Usage maps to usageMetadata as promptTokenCount = InputTokens +
// CacheCreationInputTokens + CacheReadInputTokens, cachedContentTokenCount
// = CacheReadInputTokens, candidatesTokenCount = OutputTokens,
// thoughtsTokenCount = ReasoningTokens, totalTokenCount = their sum; the
// CLI copies these into the chat file's "tokens" verbatim.

// Gemini request kinds.
const (
	KindGemini      = "gemini"
	KindGeminiSide  = "gemini-side"
	KindGeminiCount = "gemini-count"
)

// geminiToolName is the CLI's shell tool; it is offered only with
// --approval-mode yolo in headless runs.
const geminiToolName = "run_shell_command"

// geminiRequest is the part of a GenerateContent request the mock reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools            []json.RawMessage `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
	} `json:"generationConfig"`
}

type geminiPart struct {
	Text             string          `json:"text"`
	FunctionCall     json.RawMessage `json:"functionCall"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

// geminiTurn decides what the latest content asks for: "after-tool" when
// it carries a functionResponse, "tool" when one of its text parts holds
// the trigger, else "text".
func geminiTurn(req geminiRequest, trigger string) string {
	for i := len(req.Contents) - 1; i >= 0; i-- {
		c := req.Contents[i]
		if c.Role != "user" && c.Role != "" {
			continue
		}
		turn := "text"
		for _, p := range c.Parts {
			if len(p.FunctionResponse) > 0 {
				return "after-tool"
			}
			if strings.Contains(p.Text, trigger) {
				turn = "tool"
			}
		}
		return turn
	}
	return "text"
}

// geminiModel returns the model and method of a /v1beta/models/{model}:{method} path.
func geminiModel(path string) (model, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1beta/models/")
	if !found {
		return "", "", false
	}
	return strings.Cut(rest, ":")
}

func geminiUsage(u Usage) map[string]any {
	prompt := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
	m := map[string]any{
		"promptTokenCount":     prompt,
		"candidatesTokenCount": u.OutputTokens,
		"totalTokenCount":      prompt + u.OutputTokens + u.ReasoningTokens,
	}
	if u.CacheReadInputTokens > 0 {
		m["cachedContentTokenCount"] = u.CacheReadInputTokens
	}
	if u.ReasoningTokens > 0 {
		m["thoughtsTokenCount"] = u.ReasoningTokens
	}
	return m
}

func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, body []byte) (string, int) {
	model, method, _ := geminiModel(r.URL.Path)
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.record(r, body, "unknown")
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"code": 400, "status": "INVALID_ARGUMENT", "message": "mockmodel: body is not a GenerateContent request: " + err.Error()},
		})
		return "unknown", http.StatusBadRequest
	}
	switch method {
	case "countTokens":
		s.record(r, body, KindGeminiCount)
		u := geminiUsage(s.cfg.Usage)
		writeJSON(w, http.StatusOK, map[string]any{"totalTokens": u["promptTokenCount"]})
		return KindGeminiCount, http.StatusOK
	case "generateContent":
		s.record(r, body, KindGeminiSide)
		text := s.cfg.Reply
		if strings.Contains(req.GenerationConfig.ResponseMimeType, "json") || len(req.GenerationConfig.ResponseJSONSchema) > 0 {
			// The model router's classifier wants a score of 1..100.
			text = mustJSON(map[string]any{"complexity_reasoning": "mock", "complexity_score": 50})
		}
		writeJSON(w, http.StatusOK, s.geminiResponse(model, []any{map[string]any{"text": text}}, s.cfg.Usage))
		return KindGeminiSide, http.StatusOK
	}
	kind := KindGeminiSide
	usage := s.cfg.Usage
	turn := "text"
	if len(req.Tools) > 0 {
		kind = KindGemini
		usage = s.usageFor(body)
		turn = geminiTurn(req, s.cfg.ToolTrigger)
	}
	s.record(r, body, kind)
	e := newSSE(w)
	if turn == "tool" {
		call := map[string]any{"functionCall": map[string]any{"name": geminiToolName,
			"args": map[string]any{"command": s.cfg.ToolCommand, "description": "mock tool call"}}}
		e.data(s.geminiResponse(model, []any{call}, usage))
		return kind, http.StatusOK
	}
	text := s.cfg.Reply
	if turn == "after-tool" {
		text = s.cfg.ToolReply
	}
	chunks := splitText(text)
	for i, c := range chunks {
		resp := s.geminiResponse(model, []any{map[string]any{"text": c}}, usage)
		if i < len(chunks)-1 {
			cand := resp["candidates"].([]any)[0].(map[string]any)
			delete(cand, "finishReason")
			delete(resp, "usageMetadata")
		}
		e.data(resp)
	}
	return kind, http.StatusOK
}

// geminiResponse is one GenerateContentResponse with parts, finished.
func (s *Server) geminiResponse(model string, parts []any, u Usage) map[string]any {
	if model == "" {
		model = "mock-model"
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": geminiUsage(u),
		"modelVersion":  model,
		"responseId":    "mock_" + s.nextID(),
	}
}

// data writes one data-only server-sent event (the Gemini API's SSE
// carries no event names) and flushes it.
func (e *sse) data(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic("mockmodel: marshal: " + err.Error())
	}
	_, _ = e.w.Write(append(append([]byte("data: "), b...), "\r\n\r\n"...))
	if e.f != nil {
		e.f.Flush()
	}
}
