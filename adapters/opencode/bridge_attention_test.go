package opencode

import (
	"errors"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/hooks"
)

// TestMapAttentionReport: an attention report of the plugin (a bus event
// trimmed to what the reader reads, with the hook name the bridge runtime
// adds) maps to no moment, and the attention reader reads the same bytes
// to its fact; a report without its event type is invalid.
func TestMapAttentionReport(t *testing.T) {
	spec := Harness{}.Hooks()
	at := time.Unix(1700000000, 0)
	for _, c := range []struct {
		in     string
		state  adapters.AttentionState
		detail string
	}{
		{`{"type":"permission.asked","properties":{"sessionID":"ses_1","permission":"bash"},"hook_event_name":"attention"}`, adapters.AttentionNeedsPermission, "bash"},
		{`{"type":"permission.replied","properties":{"sessionID":"ses_1"},"hook_event_name":"attention"}`, adapters.AttentionWorking, ""},
		{`{"type":"question.asked","properties":{"sessionID":"ses_1","questions":[{"header":"Which one?"}]},"hook_event_name":"attention"}`, adapters.AttentionNeedsAnswer, "Which one?"},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError","data":{"statusCode":429}}},"hook_event_name":"attention"}`, adapters.AttentionStoppedOnError, "APIError (429)"},
		{`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}},"hook_event_name":"attention"}`, adapters.AttentionWorking, ""},
	} {
		m, err := hooks.Map(spec, "opencode", hookAttention, []byte(c.in))
		if err != nil || len(m.Moments) != 0 || m.HarnessSessionID != "ses_1" {
			t.Errorf("%s: %+v, %v; want no moment of ses_1", c.in, m, err)
		}
		f, ok := Harness{}.AttentionEvent([]byte(c.in), at)
		if !ok || f.State != c.state || f.Detail != c.detail || f.Source != adapters.AttentionFromHook {
			t.Errorf("%s: fact %+v, %v; want %s %q from the hook", c.in, f, ok, c.state, c.detail)
		}
	}
	if _, err := hooks.Map(spec, "opencode", hookAttention, []byte(`{"properties":{}}`)); !errors.Is(err, hooks.ErrInvalidInput) {
		t.Errorf("a report without its type: %v", err)
	}
}
