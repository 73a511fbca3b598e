package contract

import (
	"strconv"
	"strings"
)

// OrgLoop hook types: what OrgLoop's coding-agent connector calls a
// session's start and its end.
const (
	OrgLoopHookStart = "start"
	OrgLoopHookStop  = "stop"
)

// OrgLoopHookPost is the body OrgLoop's coding-agent webhook source (and
// its harness-named alias) accepts for one session start or stop. The
// connector derives phase, outcome and reason from HookType and
// ExitStatus; Meta, which it passes through to its event, carries
// lifeloop's own classification and the event id beside them.
type OrgLoopHookPost struct {
	SessionID        string         `json:"session_id"`
	WorkingDirectory string         `json:"working_directory"`
	DurationSeconds  float64        `json:"duration_seconds"`
	ExitStatus       *int           `json:"exit_status,omitempty"`
	Summary          string         `json:"summary,omitempty"`
	HookType         string         `json:"hook_type"`
	Timestamp        string         `json:"timestamp"`
	Meta             map[string]any `json:"meta,omitempty"`
}

// OrgLoopWebhookPost builds the webhook body of a receipt whose OrgLoop
// event is started (hook_type start) or terminal (hook_type stop); other
// receipts, active phases included (the connector has no hook for them),
// return ErrNoOrgLoopPhase.
//
// session_id is the session of the event's dedupe key (OrgLoopIncarnation:
// <session>.r<N> for the stop and start of renewal N, <session>.s<N> for
// those of the Nth switch to a new harness session), because the
// connector builds its key from it. exit_status is chosen so the
// connector's reading of it (seed 003's table) gives lifeloop's phase
// (connectorExitStatus); when that differs from the status the harness
// exited with, the real one is in meta.exit_status. The stop and start
// of a renewal a policy client asked for carry its evidence in
// meta.renewal_policy; a stop whose session.ended carries the session's
// attention, that block in meta.attention; a stop whose session.ended
// carries usage, that block in meta.usage.
func OrgLoopWebhookPost(r LifecycleReceipt, o OrgLoopOptions) (OrgLoopHookPost, error) {
	ev, err := ProjectOrgLoop(r, o)
	if err != nil {
		return OrgLoopHookPost{}, err
	}
	lc, p := ev.Payload.Lifecycle, ev.Payload
	post := OrgLoopHookPost{
		SessionID:        OrgLoopIncarnation(r, p.SessionID),
		WorkingDirectory: p.WorkingDirectory,
		Timestamp:        ev.Timestamp,
		Meta: map[string]any{
			"event_id":   ev.ID,
			"dedupe_key": lc.DedupeKey,
			"phase":      string(lc.Phase),
			"adapter":    p.Session.Adapter,
			"harness":    p.Session.Harness,
			"platform":   OrgLoopPlatform,
		},
	}
	switch {
	case lc.Phase == PhaseStarted:
		post.HookType = OrgLoopHookStart
	case lc.Terminal:
		post.HookType = OrgLoopHookStop
		post.Meta["outcome"] = string(lc.Outcome)
		post.Meta["reason"] = lc.Reason
		post.ExitStatus = Ptr(connectorExitStatus(lc, p.ExitStatus))
		if p.ExitStatus != nil && *p.ExitStatus != *post.ExitStatus {
			post.Meta["exit_status"] = *p.ExitStatus
		}
		if p.DurationSeconds != nil {
			post.DurationSeconds = *p.DurationSeconds
		}
	default:
		return OrgLoopHookPost{}, ErrNoOrgLoopPhase
	}
	if post.SessionID != p.SessionID {
		post.Meta["session_id"] = p.SessionID
	}
	if p.RenewalPolicy != nil {
		post.Meta["renewal_policy"] = p.RenewalPolicy
	}
	if p.Attention != nil {
		// A stop's: the session's waiting for a person.
		post.Meta["attention"] = p.Attention
	}
	if p.Usage != nil && lc.Terminal {
		// A stop's: the tokens and cost of what it ends.
		post.Meta["usage"] = p.Usage
	}
	return post, nil
}

// connectorExitStatus is the exit status OrgLoop's connector reads as
// lifecycle lc's phase: the real one (exit) when it already reads so;
// else 0 for completed, 1 for failed, and for stopped 128+N for a known
// signal N in lc.Reason, else 143 (SIGTERM, how lifeloop stops a harness:
// an abort, a renewal, a lost wrapper, an unknown stop).
func connectorExitStatus(lc OrgLoopLifecycle, exit *int) int {
	code := -1
	if exit != nil {
		code = *exit
	}
	switch lc.Phase {
	case PhaseCompleted:
		return 0
	case PhaseFailed:
		if code >= 1 && code <= 128 {
			return code
		}
		return 1
	default:
		if code > 128 {
			return code
		}
		switch lc.Reason {
		case "sigint":
			return 130
		case "sigkill":
			return 137
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(lc.Reason, "signal_")); err == nil && strings.HasPrefix(lc.Reason, "signal_") && n > 0 && n < 128 {
			return 128 + n
		}
		return 143
	}
}
