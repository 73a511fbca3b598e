package opencode

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.AttentionReader = Harness{}

// openCodeEvent is a bus event of OpenCode 1.18.33 as its plugin's event
// hook receives it: {"type", "properties"} (the fields read in its
// OpenAPI document, components.schemas.Event*).
type openCodeEvent struct {
	Type       string `json:"type"`
	Properties struct {
		Permission string `json:"permission"`
		Action     string `json:"action"`
		Questions  []struct {
			Header   string `json:"header"`
			Question string `json:"question"`
		} `json:"questions"`
		Error *struct {
			Name string `json:"name"`
			Data struct {
				StatusCode int `json:"statusCode"`
			} `json:"data"`
		} `json:"error"`
		Status *struct {
			Type string `json:"type"`
		} `json:"status"`
	} `json:"properties"`
}

// AttentionEvent implements adapters.AttentionReader: one OpenCode
// plugin bus event, received at. permission.asked / question.asked open
// a dialog, their .replied (and question.rejected) close it;
// session.error stops the turn on an error (detail: its name and HTTP
// status, "APIError (429)"; never its message or body); session.status
// busy is work (retry too: it retries by itself), idle ends the turn.
// The v2 family (permission.v2.*, question.v2.*) maps alike.
func (Harness) AttentionEvent(payload []byte, at time.Time) (adapters.AttentionFact, bool) {
	var e openCodeEvent
	if json.Unmarshal(payload, &e) != nil {
		return adapters.AttentionFact{}, false
	}
	p := e.Properties
	f := adapters.AttentionFact{At: at, Kind: adapters.AttentionClaim, Source: adapters.AttentionFromHook, Evidence: e.Type}
	switch e.Type {
	case "permission.asked":
		f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(p.Permission)
	case "permission.v2.asked":
		f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(p.Action)
	case "question.asked", "question.v2.asked":
		f.State, f.Detail = adapters.AttentionNeedsAnswer, ""
		if len(p.Questions) > 0 {
			f.Detail = adapters.BoundDetail(p.Questions[0].Header)
			if f.Detail == "" {
				f.Detail = adapters.BoundDetail(p.Questions[0].Question)
			}
		}
	case "permission.replied", "permission.v2.replied", "question.replied", "question.v2.replied", "question.rejected", "question.v2.rejected":
		f.State = adapters.AttentionWorking
	case "session.error":
		if p.Error == nil || p.Error.Name == "MessageAbortedError" {
			return adapters.AttentionFact{}, false // an abort the person asked for is no error
		}
		f.State, f.Detail = adapters.AttentionStoppedOnError, adapters.BoundDetail(p.Error.Name)
		if c := p.Error.Data.StatusCode; c != 0 {
			f.Detail = adapters.BoundDetail(fmt.Sprintf("%s (%d)", p.Error.Name, c))
		}
	case "session.status":
		if p.Status == nil {
			return adapters.AttentionFact{}, false
		}
		switch p.Status.Type {
		case "busy":
			f.State = adapters.AttentionWorking
		case "idle":
			f.Kind = adapters.AttentionTurnEnded
		case "retry":
			f.State = adapters.AttentionWorking // it retries by itself: nobody is needed yet
		default:
			return adapters.AttentionFact{}, false
		}
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}

// AttentionRecord implements adapters.AttentionReader: OpenCode's store
// says nothing measured about attention yet.
func (Harness) AttentionRecord([]byte) (adapters.AttentionFact, bool) {
	return adapters.AttentionFact{}, false
}

// AttentionScreen implements adapters.AttentionReader: what OpenCode
// 1.18.33's TUI draws when a tool asks (measured:
// testdata/attention/opencode-permission.screen.txt).
func (Harness) AttentionScreen() []adapters.AttentionScreenRule {
	return []adapters.AttentionScreenRule{
		{Text: "Permission required", State: adapters.AttentionNeedsPermission, Evidence: "opencode:permission-dialog"},
	}
}
