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
// (measured with 0.24.4): Qwen Code writes one for every call it makes,
// the main conversation's and its own side agents' (the memory
// extractor it runs after a turn, subagents; they name themselves in
// subagent_name and have no assistant record), and counts the same
// events in its /stats and ~/.qwen/usage_record.jsonl. Its counts are
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

// errNotJSON is the error of a line that is not JSON.
var errNotJSON = errors.New("not a JSON line")

func (*usageParser) State() []byte { return nil }

func (*usageParser) Parse(dst []adapters.UsageEntry, line []byte) ([]adapters.UsageEntry, error) {
	if !bytes.Contains(line, apiResponseName) {
		if !json.Valid(line) {
			return dst, errNotJSON
		}
		return dst, nil
	}
	var r apiResponse
	if err := json.Unmarshal(line, &r); err != nil {
		return dst, err
	}
	if r.Type != "system" || r.Subtype != "ui_telemetry" || r.SystemPayload == nil || r.SystemPayload.UIEvent == nil {
		return dst, nil
	}
	ev := r.SystemPayload.UIEvent
	if ev.Name != "qwen-code.api_response" && ev.Name != "api_response" {
		return dst, nil
	}
	out := ev.Output + ev.Thoughts
	if ev.Total > 0 {
		out = max(ev.Total-ev.Input, 0)
	}
	e := adapters.UsageEntry{
		At: telemetry.ParseTime(r.Timestamp), SessionID: r.SessionID, Project: r.Cwd, Model: ev.Model,
		Tokens: adapters.UsageTokens{Input: max(ev.Input-ev.Cached, 0), CacheRead: ev.Cached, Output: out, Reasoning: min(ev.Thoughts, out)},
	}
	switch {
	case ev.ResponseID != "":
		e.Key = r.SessionID + ":" + ev.ResponseID
	case r.UUID != "":
		e.Key = r.SessionID + ":" + r.UUID
	}
	return append(dst, e), nil
}
