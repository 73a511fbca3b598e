package opencode

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// mapped is what AttentionEvent should make of one payload.
type mapped struct {
	payload string
	ok      bool
	kind    adapters.AttentionKind
	state   adapters.AttentionState
	detail  string
}

const (
	claim       = adapters.AttentionClaim
	turnStarted = adapters.AttentionTurnStarted
	turnEnded   = adapters.AttentionTurnEnded
)

func checkAttentionEvents(t *testing.T, cases []mapped) {
	t.Helper()
	at := time.Date(2026, 12, 2, 12, 0, 1, 0, time.UTC)
	for _, c := range cases {
		f, ok := Harness{}.AttentionEvent([]byte(c.payload), at)
		if ok != c.ok || (ok && (f.Kind != c.kind || f.State != c.state || f.Detail != c.detail || f.Source != adapters.AttentionFromHook || !f.At.Equal(at))) {
			t.Errorf("AttentionEvent(%s) = %+v %v, want %s %s %q %v", c.payload, f, ok, c.kind, c.state, c.detail, c.ok)
		}
	}
}

func TestAttentionEvent(t *testing.T) {
	checkAttentionEvents(t, []mapped{
		{`{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_1","permission":"bash","patterns":["touch *"],"metadata":{},"always":[]}}`, true, claim, adapters.AttentionNeedsPermission, "bash"},
		{`{"type":"permission.replied","properties":{"sessionID":"ses_1","requestID":"per_1","reply":"once"}}`, true, claim, adapters.AttentionWorking, ""},
		{`{"type":"question.asked","properties":{"id":"que_1","sessionID":"ses_1","questions":[{"header":"Pick","question":"Which?"}]}}`, true, claim, adapters.AttentionNeedsAnswer, "Pick"},
		{`{"type":"question.rejected","properties":{"sessionID":"ses_1","requestID":"que_1"}}`, true, claim, adapters.AttentionWorking, ""},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"secret body","statusCode":429}}}}`, true, claim, adapters.AttentionStoppedOnError, "APIError (429)"},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"ProviderAuthError","data":{"message":"x"}}}}`, true, claim, adapters.AttentionStoppedOnError, "ProviderAuthError"},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"MessageAbortedError"}}}`, false, "", "", ""},
		{`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}`, true, claim, adapters.AttentionWorking, ""},
		{`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"idle"}}}`, true, turnEnded, "", ""},
		{`{"type":"message.updated","properties":{}}`, false, "", "", ""},
	})
}
