package attention

import (
	"encoding/json"
	"fmt"
	"time"
)

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

// OpenCodeEvent maps one OpenCode plugin bus event, received at, to a
// fact; ok is false for events that say nothing about attention.
// permission.asked / question.asked open a dialog, their .replied (and
// question.rejected) close it; session.error stops the turn on an error
// (detail: its name and HTTP status, "APIError (429)"; never its message
// or body); session.status busy is work (retry too: it retries by
// itself), idle ends the turn. The v2 family (permission.v2.*,
// question.v2.*) maps alike.
func OpenCodeEvent(payload []byte, at time.Time) (Fact, bool) {
	var e openCodeEvent
	if json.Unmarshal(payload, &e) != nil {
		return Fact{}, false
	}
	p := e.Properties
	f := Fact{At: at, Kind: Claim, Source: SourceHook, Evidence: e.Type}
	switch e.Type {
	case "permission.asked":
		f.State, f.Detail = NeedsPermission, Bound(p.Permission)
	case "permission.v2.asked":
		f.State, f.Detail = NeedsPermission, Bound(p.Action)
	case "question.asked", "question.v2.asked":
		f.State, f.Detail = NeedsAnswer, ""
		if len(p.Questions) > 0 {
			f.Detail = Bound(p.Questions[0].Header)
			if f.Detail == "" {
				f.Detail = Bound(p.Questions[0].Question)
			}
		}
	case "permission.replied", "permission.v2.replied", "question.replied", "question.v2.replied", "question.rejected", "question.v2.rejected":
		f.State = Working
	case "session.error":
		if p.Error == nil || p.Error.Name == "MessageAbortedError" {
			return Fact{}, false // an abort the person asked for is no error
		}
		f.State, f.Detail = StoppedOnError, Bound(p.Error.Name)
		if c := p.Error.Data.StatusCode; c != 0 {
			f.Detail = Bound(fmt.Sprintf("%s (%d)", p.Error.Name, c))
		}
	case "session.status":
		if p.Status == nil {
			return Fact{}, false
		}
		switch p.Status.Type {
		case "busy":
			f.State = Working
		case "idle":
			f.Kind = TurnEnded
		case "retry":
			f.State = Working // it retries by itself: nobody is needed yet
		default:
			return Fact{}, false
		}
	default:
		return Fact{}, false
	}
	return f, true
}
