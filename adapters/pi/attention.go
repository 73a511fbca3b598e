package pi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.AttentionReader = Harness{}

// AttentionEvent implements adapters.AttentionReader: Pi has no
// permission dialogs and its bridge's events are the turns (frames).
func (Harness) AttentionEvent([]byte, time.Time) (adapters.AttentionFact, bool) {
	return adapters.AttentionFact{}, false
}

// AttentionScreen implements adapters.AttentionReader: Pi draws no
// dialog of its own.
func (Harness) AttentionScreen() []adapters.AttentionScreenRule { return nil }

// piAssistantLine is the part of a Pi session-file message line the
// attention mapping reads (measured with 0.73.1:
// testdata/attention/pi-error*.session.jsonl).
type piAssistantLine struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Message   struct {
		Role         string `json:"role"`
		StopReason   string `json:"stopReason"`
		ErrorMessage string `json:"errorMessage"`
	} `json:"message"`
}

// AttentionRecord implements adapters.AttentionReader: one line of a Pi
// session file. An assistant message that stopped on an error
// (stopReason "error") stopped the turn on it: the detail is the error's
// kind and HTTP status, e.g. "rate_limit_error (429)", never its text.
// "aborted" is the person's own stop: nothing. Pi retries a transient
// error by itself (three times, 2, 4 and 8 s apart, each attempt's error
// kept in the file, measured), outside any turn its bridge reports, so
// the assistant message of a retry that succeeded ends the error: a tool
// call (toolUse) means it works again, a reply that ended (stop, length)
// that it waits for input.
func (Harness) AttentionRecord(line []byte) (adapters.AttentionFact, bool) {
	if !bytes.Contains(line, []byte(`"stopReason"`)) { // only assistant messages have one
		return adapters.AttentionFact{}, false
	}
	var l piAssistantLine
	if json.Unmarshal(line, &l) != nil || l.Type != "message" || l.Message.Role != "assistant" {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: l.Timestamp, Kind: adapters.AttentionClaim, Source: adapters.AttentionFromTranscript, Evidence: "session:" + l.Message.StopReason}
	switch l.Message.StopReason {
	case "error":
		f.State, f.Detail = adapters.AttentionStoppedOnError, piErrorKind(l.Message.ErrorMessage)
	case "toolUse":
		f.State = adapters.AttentionWorking
	case "stop", "length":
		f.State = adapters.AttentionWaitingForInput
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}

// piErrorKind names the kind of a Pi errorMessage: the provider's error
// type and the HTTP status it starts with ("429 {\"error\":{\"type\":
// \"rate_limit_error\",…}}" gives "rate_limit_error (429)"), the status
// alone, or "error" for a message without either (a network failure).
func piErrorKind(msg string) string {
	status, body, _ := strings.Cut(msg, " ")
	code, err := strconv.Atoi(status)
	if err != nil || code < 100 || code > 599 {
		return "error"
	}
	var doc struct {
		Error struct {
			Type string `json:"type"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(body), &doc) == nil && doc.Error.Type != "" {
		return adapters.BoundDetail(fmt.Sprintf("%s (%d)", doc.Error.Type, code))
	}
	return fmt.Sprintf("http %d", code)
}
