package mockmodel

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// KindFailed is the Request.Kind of a model request the mock answered
// with an HTTP error (Server.Fail).
const KindFailed = "failed"

// Failure is an HTTP error answer to model requests: a rate limit (429)
// or a server error (500, 529, …), with each wire's error document:
//
//   - Anthropic Messages: {"type":"error","error":{"type":"rate_limit_error"
//     (429), "overloaded_error" (529), "api_error" (5xx), …,"message"}}
//   - OpenAI Responses: {"error":{"message","type","param":null,"code":
//     "rate_limit_exceeded" (429) or "server_error"}}
//   - Gemini: {"error":{"code","message","status":"RESOURCE_EXHAUSTED"
//     (429) or "INTERNAL"}}
type Failure struct {
	// Status is the HTTP status; 0 is no failure.
	Status int
	// RetryAfter, when positive, is sent as the retry-after header
	// (whole seconds, rounded up).
	RetryAfter time.Duration
}

// Rate429 is a rate limit that asks for a retry after one second.
var Rate429 = Failure{Status: http.StatusTooManyRequests, RetryAfter: time.Second}

// Server500 is an internal server error.
var Server500 = Failure{Status: http.StatusInternalServerError}

// failing is the failure scripted now: f for the next left model requests,
// or every one while left is negative.
type failing struct {
	f    Failure
	left int
	// failed counts the requests answered with an error.
	failed int
}

// Fail answers the next n model requests with f (n <= 0: every model
// request until Fail is called again); Fail(Failure{}, 0) stops failing.
// Model requests are the POSTs to /v1/messages, /v1/responses and a
// Gemini model's generateContent / streamGenerateContent (side requests
// such as titles included; the preflight and token counts are answered
// as usual). A failed request is recorded with Kind KindFailed.
func (s *Server) Fail(f Failure, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing.f, s.failing.left = f, n
	if n <= 0 {
		s.failing.left = -1
	}
	if f.Status == 0 {
		s.failing.left = 0
	}
}

// Failed is how many model requests were answered with an error so far.
func (s *Server) Failed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failing.failed
}

// takeFailure returns the failure the request r is to get, consuming one
// of the next n, or ok false.
func (s *Server) takeFailure(r *http.Request) (Failure, bool) {
	if !isModelRequest(r) {
		return Failure{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failing.left == 0 || s.failing.f.Status == 0 {
		return Failure{}, false
	}
	if s.failing.left > 0 {
		s.failing.left--
	}
	s.failing.failed++
	return s.failing.f, true
}

// isModelRequest reports whether r asks a model for an answer.
func isModelRequest(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	switch p := r.URL.Path; {
	case p == "/v1/messages", p == "/v1/responses":
		return true
	case strings.HasPrefix(p, "/v1beta/models/"):
		_, method, ok := geminiModel(p)
		return ok && (method == "generateContent" || method == "streamGenerateContent")
	}
	return false
}

// writeFailure answers r with f in the error document of r's wire.
func writeFailure(w http.ResponseWriter, r *http.Request, f Failure) {
	if f.RetryAfter > 0 {
		secs := int((f.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("retry-after", strconv.Itoa(secs))
	}
	msg := fmt.Sprintf("mockmodel: scripted %d %s", f.Status, http.StatusText(f.Status))
	rate := f.Status == http.StatusTooManyRequests
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1beta/"):
		status := "INTERNAL"
		if rate {
			status = "RESOURCE_EXHAUSTED"
		}
		writeJSON(w, f.Status, map[string]any{"error": map[string]any{"code": f.Status, "message": msg, "status": status}})
	case r.URL.Path == "/v1/responses":
		kind, code := "server_error", any(nil)
		if rate {
			kind, code = "requests", "rate_limit_exceeded"
		}
		writeJSON(w, f.Status, map[string]any{"error": map[string]any{"message": msg, "type": kind, "param": nil, "code": code}})
	default:
		writeJSON(w, f.Status, map[string]any{"type": "error", "error": map[string]any{"type": anthropicErrorType(f.Status), "message": msg}})
	}
}

// anthropicErrorType is the Messages API's error type of status.
func anthropicErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}
