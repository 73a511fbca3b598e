package contract

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
// exit_status is the shell-style status of ProjectOrgLoop. When lifeloop
// saw none it is 1 for a failed phase (a launch that failed), so the
// connector records a failure; for any other stop it is left out, which
// OrgLoop's connector reads as 0 (right for a watch that ended idle, not
// for a stop of unknown cause): meta.phase and meta.outcome say what
// lifeloop knows.
func OrgLoopWebhookPost(r LifecycleReceipt, o OrgLoopOptions) (OrgLoopHookPost, error) {
	ev, err := ProjectOrgLoop(r, o)
	if err != nil {
		return OrgLoopHookPost{}, err
	}
	lc, p := ev.Payload.Lifecycle, ev.Payload
	post := OrgLoopHookPost{
		SessionID:        p.SessionID,
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
		post.ExitStatus = p.ExitStatus
		if post.ExitStatus == nil && lc.Phase == PhaseFailed {
			post.ExitStatus = Ptr(1)
		}
		if p.DurationSeconds != nil {
			post.DurationSeconds = *p.DurationSeconds
		}
	default:
		return OrgLoopHookPost{}, ErrNoOrgLoopPhase
	}
	return post, nil
}
