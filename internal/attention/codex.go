package attention

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// codexRolloutLine is the part of a Codex 0.169 rollout line the mapping
// reads: an event_msg task_complete, whose error says why the turn
// stopped (measured: testdata/codex-error.rollout.jsonl).
type codexRolloutLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type  string `json:"type"`
		Error *struct {
			Info map[string]json.RawMessage `json:"codex_error_info"`
		} `json:"error"`
	} `json:"payload"`
}

// CodexRollout maps one line of a Codex rollout to a fact observed at the
// line's timestamp; ok is false for lines that say nothing about
// attention. A task_complete ends the turn; with an error (the model
// endpoint refused past the retries, …) the turn stopped on it: the
// detail is the error's kind and HTTP status, never its message.
func CodexRollout(line []byte) (Fact, bool) {
	var l codexRolloutLine
	if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "task_complete" {
		return Fact{}, false
	}
	f := Fact{At: l.Timestamp, Kind: TurnEnded, Source: SourceTranscript, Evidence: "rollout:task_complete"}
	if e := l.Payload.Error; e != nil {
		f.Kind, f.State, f.Detail = Claim, StoppedOnError, codexErrorKind(e.Info)
	}
	return f, true
}

// codexErrorKind names the first kind in codex_error_info, with the HTTP
// status its details carry, e.g. "response_too_many_failed_attempts (429)".
func codexErrorKind(info map[string]json.RawMessage) string {
	kinds := make([]string, 0, len(info))
	for k := range info {
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return "error"
	}
	sort.Strings(kinds)
	var d struct {
		Status int `json:"http_status_code"`
	}
	if json.Unmarshal(info[kinds[0]], &d) == nil && d.Status != 0 {
		return Bound(fmt.Sprintf("%s (%d)", kinds[0], d.Status))
	}
	return Bound(kinds[0])
}
