// Package mockmodel is a loopback mock of the two model APIs the real
// harnesses speak: the Anthropic Messages API (Claude Code) and the OpenAI
// Responses API (Codex). It lets end-to-end tests run the real binaries
// fully offline, with scripted replies and scripted token usage.
//
// Behaviour:
//
//   - HEAD / answers 200 (Claude's connectivity preflight).
//   - POST /v1/messages answers as Claude's model: an SSE stream when the
//     request asks for "stream":true, else one JSON message.
//   - POST /v1/messages/count_tokens answers {"input_tokens":N}.
//   - POST /v1/responses answers as Codex's model with an SSE stream.
//   - POST /v1beta/models/{model}:{method} answers as Gemini CLI's model
//     (gemini.go).
//   - Anything else is recorded and answered 404 with a JSON error body.
//
// When the latest user prompt contains Config.ToolTrigger the reply is a
// tool call (Claude: tool_use "Bash" {"command":"echo hi"}, or "bash"
// when the request offers only that, as OpenCode's does; Codex:
// function_call "exec_command" {"cmd":"echo hi"}); when the latest input
// is the result of a tool call the reply is Config.ToolReply. Otherwise the
// reply is Config.Reply.
//
// A request whose body contains Config.HoldTrigger waits for
// Server.Release before it is answered, so a turn can be held open.
//
// Config.Fail, and Server.Fail while the test runs, answer model requests
// with an HTTP error (429 with retry-after, 500, …) in each wire's error
// document (fail.go), so every harness can be made to hit an API error.
//
// Usage numbers are taken from Config.UsageSequence, one entry per
// conversation response (requests that offer tools; side requests such as
// title generation do not consume entries), then Config.Usage once the
// sequence is exhausted. The harnesses copy these numbers verbatim into
// their transcripts, so any context size can be simulated.
//
// Every request is recorded (see Server.Requests) and the server is safe
// for concurrent use.
package mockmodel

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Default values used when the corresponding Config field is empty.
const (
	DefaultReply       = "Hello from the mock model."
	DefaultToolReply   = "The tool said hi."
	DefaultToolTrigger = "RUN_TOOL"
	DefaultToolCommand = "echo hi"
)

// Usage is the token usage reported with one response. The Anthropic
// stream reports InputTokens, CacheCreationInputTokens, CacheReadInputTokens
// and OutputTokens; the Responses stream reports InputTokens,
// CacheReadInputTokens (as input_tokens_details.cached_tokens),
// OutputTokens, ReasoningTokens and their total.
type Usage struct {
	InputTokens              int
	CacheCreationInputTokens int
	CacheReadInputTokens     int
	OutputTokens             int
	ReasoningTokens          int
}

// DefaultUsage is reported when Config.Usage is the zero value.
var DefaultUsage = Usage{InputTokens: 12, OutputTokens: 5}

// Config scripts the mock. The zero value is usable.
type Config struct {
	// Addr is the listen address; default "127.0.0.1:0". Only loopback
	// addresses are accepted.
	Addr string
	// Reply is the text of a plain answer; default DefaultReply.
	Reply string
	// ToolReply is the text sent once a tool result arrives; default
	// DefaultToolReply.
	ToolReply string
	// ToolTrigger, when found in the latest user prompt, makes the reply a
	// tool call; default DefaultToolTrigger.
	ToolTrigger string
	// ToolCommand is the shell command the tool call asks for; default
	// DefaultToolCommand.
	ToolCommand string
	// Usage is reported once UsageSequence is exhausted; default
	// DefaultUsage.
	Usage Usage
	// UsageSequence is consumed one entry per conversation response.
	UsageSequence []Usage
	// Logger, when set, receives one line per request (method, path,
	// status, kind). Bodies are never logged there.
	Logger *slog.Logger
	// BodyLog, when set, receives one JSON line per request with its
	// body ({"kind","method","path","body"}; body is the request's JSON,
	// or a string when it is not JSON), so a person or script can see
	// where a marker landed. It is written under the server's lock.
	BodyLog io.Writer
	// HoldTrigger, when set, holds every model request whose body
	// contains it (the turn stays open) until Server.Release; Held counts
	// the requests held so far. Empty: nothing is held.
	HoldTrigger string
	// BytesPerToken, when positive, makes a conversation response report
	// the request's own size as its input: InputTokens is the body's
	// length divided by it (cache tokens 0), so the pressure a harness
	// sees grows with its conversation and falls when it starts afresh.
	BytesPerToken int
	// Fail, when its Status is set, answers every model request with
	// that error from the start, until Server.Fail says otherwise.
	Fail Failure
}

// Request is one recorded request.
type Request struct {
	Method string
	// Path is the URL path without the query.
	Path string
	// Query is the raw query string.
	Query  string
	Header http.Header
	Body   []byte
	// Kind says how the mock classified the request: "preflight",
	// "claude", "claude-side", "count_tokens", "codex", "codex-side",
	// "unknown", the Gemini kinds, or KindFailed (Server.Fail).
	Kind string
}

// Server is a running mock. Create it with Start, stop it with Close.
type Server struct {
	cfg  Config
	ln   net.Listener
	http *http.Server
	done chan struct{}

	mu       sync.Mutex
	requests []Request
	usageIdx int
	seq      int
	idPrefix string

	held     int
	release  chan struct{}
	released sync.Once

	failing failing
}

// Start listens on cfg.Addr (default 127.0.0.1:0) and serves until Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Reply == "" {
		cfg.Reply = DefaultReply
	}
	if cfg.ToolReply == "" {
		cfg.ToolReply = DefaultToolReply
	}
	if cfg.ToolTrigger == "" {
		cfg.ToolTrigger = DefaultToolTrigger
	}
	if cfg.ToolCommand == "" {
		cfg.ToolCommand = DefaultToolCommand
	}
	if cfg.Usage == (Usage{}) {
		cfg.Usage = DefaultUsage
	}
	cfg.UsageSequence = append([]Usage(nil), cfg.UsageSequence...)
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mockmodel: bad listen address %q: %w (use host:port, e.g. 127.0.0.1:0)", cfg.Addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("mockmodel: listen address %q is not a loopback IP; use 127.0.0.1", cfg.Addr)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(context.Background(), "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("mockmodel: listen on %s: %w", cfg.Addr, err)
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	s := &Server{cfg: cfg, ln: ln, done: make(chan struct{}), idPrefix: hex.EncodeToString(rnd[:]), release: make(chan struct{})}
	s.Fail(cfg.Fail, 0)
	s.http = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(s.done)
		_ = s.http.Serve(ln)
	}()
	return s, nil
}

// URL is the base URL, e.g. "http://127.0.0.1:41234" (no trailing slash).
// Claude takes it as ANTHROPIC_BASE_URL; Codex takes URL()+"/v1".
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Close stops the server and waits for its serve loop to end. It is
// idempotent; open streams are cut.
func (s *Server) Close() error {
	s.Release()
	err := s.http.Close()
	<-s.done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Requests returns a copy of every request received so far, in arrival
// order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		r.Header = r.Header.Clone()
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

// RequestsOfKind returns the recorded requests whose Kind is kind.
func (s *Server) RequestsOfKind(kind string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(r *http.Request, body []byte, kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Request{
		Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Header: r.Header.Clone(), Body: body, Kind: kind,
	})
}

// logBody writes one request to BodyLog.
func (s *Server) logBody(r *http.Request, body []byte, kind string) {
	if s.cfg.BodyLog == nil {
		return
	}
	var b any = string(body)
	if json.Valid(body) {
		b = json.RawMessage(body)
	}
	line, err := json.Marshal(map[string]any{"kind": kind, "method": r.Method, "path": r.URL.Path, "body": b})
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.cfg.BodyLog.Write(append(line, '\n'))
}

// nextUsage returns the usage for a conversation response, consuming one
// sequence entry.
func (s *Server) nextUsage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.usageIdx < len(s.cfg.UsageSequence) {
		u := s.cfg.UsageSequence[s.usageIdx]
		s.usageIdx++
		return u
	}
	return s.cfg.Usage
}

// usageFor is the usage of the conversation response to a request with
// body: the next scripted usage, its input sized from the body when
// Config.BytesPerToken is set.
func (s *Server) usageFor(body []byte) Usage {
	u := s.nextUsage()
	if s.cfg.BytesPerToken > 0 {
		u.InputTokens = len(body) / s.cfg.BytesPerToken
		u.CacheCreationInputTokens, u.CacheReadInputTokens = 0, 0
	}
	return u
}

// nextID returns a unique suffix for message, item and call ids.
func (s *Server) nextID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	return fmt.Sprintf("%s%04d", s.idPrefix, s.seq)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		s.record(r, body, "unknown")
		http.Error(w, "mockmodel: read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	s.hold(r, body)
	kind, status := KindFailed, 0
	if f, ok := s.takeFailure(r); ok {
		s.record(r, body, kind)
		writeFailure(w, r, f)
		status = f.Status
	} else {
		kind, status = s.route(w, r, body)
	}
	s.logBody(r, body, kind)
	if s.cfg.Logger != nil {
		s.cfg.Logger.Info("mockmodel request", "method", r.Method, "path", r.URL.Path, "kind", kind, "status", status)
	}
}

// hold waits for Release when the request's body contains
// Config.HoldTrigger, or until the request is cancelled.
func (s *Server) hold(r *http.Request, body []byte) {
	if s.cfg.HoldTrigger == "" || !bytes.Contains(body, []byte(s.cfg.HoldTrigger)) {
		return
	}
	select {
	case <-s.release:
		return
	default:
	}
	s.mu.Lock()
	s.held++
	s.mu.Unlock()
	select {
	case <-s.release:
	case <-r.Context().Done():
	}
}

// Held is how many requests Config.HoldTrigger has held so far.
func (s *Server) Held() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

// Release answers the held requests and holds none after; it is
// idempotent.
func (s *Server) Release() { s.released.Do(func() { close(s.release) }) }

func (s *Server) route(w http.ResponseWriter, r *http.Request, body []byte) (kind string, status int) {
	switch {
	case r.URL.Path == "/" && (r.Method == http.MethodHead || r.Method == http.MethodGet):
		s.record(r, body, "preflight")
		w.WriteHeader(http.StatusOK)
		return "preflight", http.StatusOK
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		s.record(r, body, "count_tokens")
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": s.cfg.Usage.InputTokens})
		return "count_tokens", http.StatusOK
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		return s.serveMessages(w, r, body)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		return s.serveResponses(w, r, body)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/"):
		return s.serveGemini(w, r, body)
	default:
		s.record(r, body, "unknown")
		writeJSON(w, http.StatusNotFound, map[string]any{
			"type":  "error",
			"error": map[string]any{"type": "not_found_error", "message": "mockmodel does not serve " + r.Method + " " + r.URL.Path},
		})
		return "unknown", http.StatusNotFound
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events and flushes after each one.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &sse{w: w, f: f}
}

func (e *sse) event(name string, data any) {
	b, err := json.Marshal(data)
	if err != nil {
		panic(fmt.Sprintf("mockmodel: marshal %s event: %v", name, err))
	}
	fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	if e.f != nil {
		e.f.Flush()
	}
}

// mustJSON encodes v; v is always a plain map built here.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("mockmodel: marshal: %v", err))
	}
	return string(b)
}
