package contract

import (
	"fmt"
	"strings"
)

// Routes maps each payload placement class onto the manifest placement
// classes that can carry it, in order of preference.
type Routes map[PlacementClass][]ManifestPlacementClass

// PlacementRoutes returns the routes at event e. The payload vocabulary
// says what kind of context a client wants; the manifest vocabulary says
// when in the lifecycle an adapter can place it, so the route depends on
// the event:
//
//	event                              developer_equivalent_frame  pre_prompt_frame                       side_channel_context
//	session.starting, session.started  pre_session                 pre_session                            tool_result
//	frame.opening                      pre_frame_leading           pre_frame_leading, pre_frame_trailing  tool_result
//	any other event                    (none)                      (none)                                 tool_result
//
// receipt_only needs no route: it is always satisfiable because nothing is
// injected. manual_operator is never a route: operator surfaces are
// negotiated, not chosen by automatic placement. Callers may pass their own
// routes to ResolvePlacement instead.
func PlacementRoutes(e Event) Routes {
	routes := Routes{PlacementSideChannelContext: {ManifestToolResult}}
	switch e {
	case EventSessionStarting, EventSessionStarted:
		routes[PlacementDeveloperEquivalentFrame] = []ManifestPlacementClass{ManifestPreSession}
		routes[PlacementPrePromptFrame] = []ManifestPlacementClass{ManifestPreSession}
	case EventFrameOpening:
		routes[PlacementDeveloperEquivalentFrame] = []ManifestPlacementClass{ManifestPreFrameLeading}
		routes[PlacementPrePromptFrame] = []ManifestPlacementClass{ManifestPreFrameLeading, ManifestPreFrameTrailing}
	}
	return routes
}

// PlacementAttempt records why one acceptable placement was or was not
// satisfiable.
type PlacementAttempt struct {
	Placement   PlacementClass   `json:"placement"`
	Requirement RequirementLevel `json:"requirement"`
	// Target and Support describe the manifest placement that satisfied
	// the attempt (Target is nil when none did; Support is then the
	// support of the last route tried).
	Target    *ManifestPlacementClass `json:"target"`
	Support   SupportState            `json:"support"`
	Satisfied bool                    `json:"satisfied"`
	// TooLarge is set when some route was refused only for its max_bytes.
	TooLarge bool   `json:"too_large,omitempty"`
	Reason   string `json:"reason"`
}

// PlacementDecision is the result of ResolvePlacement for one payload.
type PlacementDecision struct {
	PayloadID string `json:"payload_id"`
	// Placement is the chosen placement, or the first acceptable one when
	// none was satisfiable.
	Placement PlacementClass `json:"placement"`
	// Target is the manifest placement used; nil for receipt_only and when
	// nothing was delivered.
	Target  *ManifestPlacementClass `json:"target"`
	Outcome PlacementOutcome        `json:"outcome"`
	// FailureClass is placement_unavailable or payload_too_large when a
	// required placement could not be met; RetryClass is its default.
	FailureClass *FailureClass `json:"failure_class"`
	RetryClass   *RetryClass   `json:"retry_class"`
	// KeepBody is false for receipt_only and for anything not delivered:
	// the body must then not be persisted.
	KeepBody bool               `json:"keep_body"`
	Attempts []PlacementAttempt `json:"attempts"`
	Reason   string             `json:"reason"`
}

// ResolvePlacement picks the first satisfiable placement of
// p.AcceptablePlacements, in client order, against manifest m and routes
// (usually PlacementRoutes(event)). A placement is satisfiable when it has
// a route whose manifest support is native, synthesized or partial (partial
// delivers with outcome degraded) and whose max_bytes, if any, is at least
// p.ByteSize; receipt_only is always satisfiable and never keeps the body.
//
// When nothing is satisfiable: with any required placement the outcome is
// failed, with failure payload_too_large if some required placement was
// refused only for size, else placement_unavailable; otherwise the outcome
// is degraded when some placement was preferred, and skipped when all were
// optional. The payload itself should have passed Check beforehand.
func ResolvePlacement(m AdapterManifest, p PayloadEnvelope, routes Routes) PlacementDecision {
	d := PlacementDecision{PayloadID: p.PayloadID, Attempts: []PlacementAttempt{}}
	anyRequired, anyPreferred, requiredTooLarge := false, false, false
	for _, ap := range p.AcceptablePlacements {
		a := attempt(m, p, ap, routes)
		d.Attempts = append(d.Attempts, a)
		if a.Satisfied {
			d.Placement, d.Target, d.KeepBody = ap.Placement, a.Target, ap.Placement != PlacementReceiptOnly
			d.Outcome, d.Reason = PlacementOutcomeDelivered, a.Reason
			if a.Support == SupportPartial {
				d.Outcome = PlacementOutcomeDegraded
			}
			return d
		}
		switch ap.Requirement {
		case RequirementRequired:
			anyRequired = true
			requiredTooLarge = requiredTooLarge || a.TooLarge
		case RequirementPreferred:
			anyPreferred = true
		}
	}
	if len(p.AcceptablePlacements) > 0 {
		d.Placement = p.AcceptablePlacements[0].Placement
	}
	reasons := make([]string, len(d.Attempts))
	for i, a := range d.Attempts {
		reasons[i] = string(a.Placement) + ": " + a.Reason
	}
	d.Reason = "no acceptable placement is satisfiable (" + strings.Join(reasons, "; ") + ")"
	switch {
	case anyRequired:
		fc := FailurePlacementUnavailable
		if requiredTooLarge {
			fc = FailurePayloadTooLarge
		}
		d.Outcome, d.FailureClass, d.RetryClass = PlacementOutcomeFailed, Ptr(fc), Ptr(fc.DefaultRetry())
	case anyPreferred:
		d.Outcome = PlacementOutcomeDegraded
	default:
		d.Outcome = PlacementOutcomeSkipped
	}
	return d
}

func attempt(m AdapterManifest, p PayloadEnvelope, ap AcceptablePlacement, routes Routes) PlacementAttempt {
	a := PlacementAttempt{Placement: ap.Placement, Requirement: ap.Requirement, Support: SupportUnavailable}
	if ap.Placement == PlacementReceiptOnly {
		a.Support, a.Satisfied, a.Reason = SupportNative, true, "receipt_only: recorded for correlation, nothing injected"
		return a
	}
	targets := routes[ap.Placement]
	if len(targets) == 0 {
		a.Reason = "no manifest placement carries it at this lifecycle moment"
		return a
	}
	var refusals []string
	for _, target := range targets {
		a.Target = Ptr(target)
		ps, claimed := m.Placement[target]
		if !claimed {
			a.Support = SupportUnavailable
			refusals = append(refusals, fmt.Sprintf("manifest has no %s claim", target))
			continue
		}
		a.Support = ps.Support
		switch ps.Support {
		case SupportNative, SupportSynthesized, SupportPartial:
		default:
			refusals = append(refusals, fmt.Sprintf("%s support is %s", target, ps.Support))
			continue
		}
		if ps.MaxBytes != nil && p.ByteSize > uint64(*ps.MaxBytes) {
			a.TooLarge = true
			refusals = append(refusals, fmt.Sprintf("payload is %d bytes, %s accepts at most %d", p.ByteSize, target, *ps.MaxBytes))
			continue
		}
		a.Satisfied, a.TooLarge = true, false
		a.Reason = fmt.Sprintf("%s via %s (%s)", ap.Placement, target, ps.Support)
		return a
	}
	a.Target = nil
	a.Reason = strings.Join(refusals, "; ")
	return a
}

// Receipt builds the PayloadReceipt recording this decision for p. The
// digest is echoed from the payload, never computed.
func (d PlacementDecision) Receipt(p PayloadEnvelope) PayloadReceipt {
	return PayloadReceipt{
		PayloadID:     p.PayloadID,
		PayloadKind:   p.PayloadKind,
		Placement:     d.Placement,
		Status:        d.Outcome,
		ByteSize:      p.ByteSize,
		ContentDigest: p.ContentDigest,
	}
}

// PlacementSite is where payloads are placed: at a hook reporting Event,
// or on a launch's command line, whose placement lands in Slot ("" when
// the command line can carry none). Resolve is the one placement
// resolver of the first launch, of every relaunch and of the hook path.
type PlacementSite struct {
	Event  Event
	Launch bool
	Slot   ManifestPlacementClass
}

// HookSite is a hook reporting e.
func HookSite(e Event) PlacementSite { return PlacementSite{Event: e} }

// LaunchSite is a launch's command line whose placement lands in slot.
// A session's first launch places only into pre_session: its payloads
// are for session.started, and a payload for the first prompt is asked
// for at frame.opening, through the hook. A relaunch also places into
// its first prompt (pre_frame_leading), where only a pre-prompt
// placement is honest, since the text becomes the first user message.
func LaunchSite(slot ManifestPlacementClass, first bool) PlacementSite {
	if first && slot != ManifestPreSession {
		slot = ""
	}
	return PlacementSite{Event: EventSessionStarting, Launch: true, Slot: slot}
}

// Resolve decides where p goes at s against manifest m: at a hook, by
// the routes of its event; on a launch's command line, by the one slot it
// has, with the manifest's own claim for it (its max_bytes) or, where the
// manifest claims none, as synthesized.
func (s PlacementSite) Resolve(m AdapterManifest, p PayloadEnvelope) PlacementDecision {
	if !s.Launch {
		return ResolvePlacement(m, p, PlacementRoutes(s.Event))
	}
	claim, ok := m.Placement[s.Slot]
	switch {
	case !ok:
		claim = PlacementSupport{Support: SupportSynthesized}
	case claim.Support != SupportNative && claim.Support != SupportPartial && claim.Support != SupportSynthesized:
		claim.Support = SupportSynthesized
	}
	m.Placement = map[ManifestPlacementClass]PlacementSupport{}
	routes := Routes{}
	switch s.Slot {
	case ManifestPreSession:
		m.Placement[s.Slot] = claim
		routes = PlacementRoutes(EventSessionStarting)
	case ManifestPreFrameLeading:
		m.Placement[s.Slot] = claim
		routes[PlacementPrePromptFrame] = []ManifestPlacementClass{ManifestPreFrameLeading}
	}
	return ResolvePlacement(m, p, routes)
}
