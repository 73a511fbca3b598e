package qwen

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// UsageFiles implements adapters.UsageReader: every
// projects/<project>/chats/*.jsonl under $QWEN_RUNTIME_DIR, else
// $QWEN_HOME, else ~/.qwen.
func (Harness) UsageFiles(getenv func(string) string) ([]string, error) {
	root := runtimeDir(getenv)
	if root == "" {
		return nil, nil
	}
	return kit.FindFiles(projectsDir(root), func(p string) bool {
		return strings.HasSuffix(p, ".jsonl") && filepath.Base(filepath.Dir(p)) == "chats"
	})
}

// NewUsageParser implements adapters.UsageReader. A model call is a
// system ui_telemetry record whose uiEvent is "qwen-code.api_response"
// (measured with 0.24.4): Qwen Code writes one for each call of the
// main conversation and of its side agents (the memory extractor it
// runs after a turn, measured; subagents, read from its package: they
// name themselves in subagent_name and have no assistant record). The
// calls it marks internal (prompt ids prompt_suggestion — the TUI's
// follow-up suggestion —, forked_query, speculation, side-query:*) are
// not written to the file, so not counted here, though its /stats and
// ~/.qwen/usage_record.jsonl count them. Its counts are
// Gemini-shaped, whatever the wire: input_token_count is the whole
// prompt (the cached tokens and, on the Anthropic wire, the tokens
// written to the cache included), cached_content_token_count the cache
// reads, total_token_count the prompt and the output (reasoning
// included). So Input = input less cached, CacheRead = cached, Output =
// total less input (Qwen Code's own rule; output_token_count plus the
// reasoning when there is no total), Reasoning = thoughts_token_count
// (part of Output; on the OpenAI wire Qwen Code estimates it from the
// text when the provider does not report it). CacheWrite is always 0:
// the record does not keep the cache writes apart (they are in Input).
// Key is the session and the response's id; Session and Project are the
// record's sessionId and cwd.
func (Harness) NewUsageParser(string, []byte) adapters.UsageParser { return &usageParser{} }

type usageParser struct{}

// apiResponse is the part of a ui_telemetry record the usage parser reads.
type apiResponse struct {
	UUID          string `json:"uuid"`
	SessionID     string `json:"sessionId"`
	Timestamp     string `json:"timestamp"`
	Type          string `json:"type"`
	Subtype       string `json:"subtype"`
	Cwd           string `json:"cwd"`
	SystemPayload *struct {
		UIEvent *struct {
			Name       string `json:"event.name"`
			ResponseID string `json:"response_id"`
			Model      string `json:"model"`
			Input      int64  `json:"input_token_count"`
			Output     int64  `json:"output_token_count"`
			Cached     int64  `json:"cached_content_token_count"`
			Thoughts   int64  `json:"thoughts_token_count"`
			Total      int64  `json:"total_token_count"`
		} `json:"uiEvent"`
	} `json:"systemPayload"`
}

// apiResponseName is what every call's record carries, and what a line
// must hold before it is decoded.
var apiResponseName = []byte(`api_response"`)

// errNotObject is the error of a line that is not a JSON object.
var errNotObject = errors.New("not a JSON object")

func (*usageParser) State() []byte { return nil }

func (*usageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	if !bytes.Contains(line, apiResponseName) {
		// No call: only a line that is plainly no JSON object is an
		// error (as Claude Code's usage parser checks its lines).
		if t := bytes.TrimSpace(line); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
			return dst, errNotObject
		}
		return dst, nil
	}
	var f apiFields
	if !scanAPIResponse(line, &f) {
		var r apiResponse
		if err := json.Unmarshal(line, &r); err != nil {
			return dst, err
		}
		f = r.fields()
	}
	if string(f.typ) != "system" || string(f.subtype) != "ui_telemetry" || !f.hasEvent {
		return dst, nil
	}
	if n := string(f.name); n != "qwen-code.api_response" && n != "api_response" {
		return dst, nil
	}
	out := f.output + f.thoughts
	if f.total > 0 {
		out = max(f.total-f.input, 0)
	}
	session := string(f.sessionID)
	e := adapters.UsageEntry{
		At: telemetry.ParseTime(string(f.timestamp)), SessionID: session, Project: string(f.cwd), Model: string(f.model),
		Tokens: adapters.UsageTokens{Input: max(f.input-f.cached, 0), CacheRead: f.cached, Output: out, Reasoning: min(f.thoughts, out)},
	}
	switch {
	case len(f.responseID) > 0:
		e.Key = session + ":" + string(f.responseID)
	case len(f.uuid) > 0:
		e.Key = session + ":" + string(f.uuid)
	}
	return append(dst, e), nil
}

// fields are r's fields as scanAPIResponse gives them.
func (r *apiResponse) fields() apiFields {
	f := apiFields{uuid: []byte(r.UUID), sessionID: []byte(r.SessionID), timestamp: []byte(r.Timestamp), typ: []byte(r.Type), subtype: []byte(r.Subtype), cwd: []byte(r.Cwd)}
	if r.SystemPayload != nil && r.SystemPayload.UIEvent != nil {
		ev := r.SystemPayload.UIEvent
		f.hasEvent = true
		f.name, f.responseID, f.model = []byte(ev.Name), []byte(ev.ResponseID), []byte(ev.Model)
		f.input, f.output, f.cached, f.thoughts, f.total = ev.Input, ev.Output, ev.Cached, ev.Thoughts, ev.Total
	}
	return f
}
