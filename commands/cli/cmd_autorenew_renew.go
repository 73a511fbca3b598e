package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/handoff"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// Where a policy renewal's note came from (renewal.Policy.NoteSource).
const (
	noteBuiltin         = "builtin"
	noteCommand         = "command"
	noteBuiltinFallback = "builtin_fallback"
)

// policyNoteName is the name the note is wrapped under (markdown).
const policyNoteName = "handoff.md"

// renew carries out a Renew decision: the note, a machine slot, and the
// control socket's renew (the operation `lifeloop renew` uses). why says
// what happened, for a person (a Failed's report); gone is true when
// the session has no live wrapper any more.
func (r *policyRunner) renew(ctx context.Context, d autorenew.Decision) (res autorenew.Result, why string, gone bool) {
	ev := d.Evidence
	if ev.Client == "" {
		ev.Client = renewal.PolicyClientID
	}
	line := decisionLine{Decision: "renew", Policy: ev.Map()}
	defer func() {
		why = line.Detail
		if !gone {
			r.remember(ev, res)
			line.Result = res.String()
			line.Policy = ev.Map()
			if res == autorenew.NotNow || res == autorenew.Busy {
				// Not asked: the count it would have had says nothing.
				delete(line.Policy, "renewals_this_hour")
			}
			r.say(line)
		}
	}()
	req := renewal.Request{BetweenTurns: true, Resume: d.Resume, Policy: &ev, Reason: "policy: " + pressureReason(ev)}
	note, noNote := r.note(ctx, &ev)
	switch {
	case note != nil:
		req.Payloads = []contract.PayloadEnvelope{*note}
	case !d.Resume:
		// Not asked: the policy's refused report says why.
		line.Detail = "no handoff note for a fresh renewal: " + noNote + "; not renewing"
		return autorenew.Failed, "", false
	default:
		line.Detail = "resumed without a handoff note: " + noNote
	}
	slot, ok, err := r.lease.TryAcquire()
	if err != nil {
		r.warn("machine renewal slots: %v", err)
		line.Detail = "no machine renewal slot: " + err.Error()
		return autorenew.Failed, "", false
	}
	if !ok {
		line.Detail = fmt.Sprintf("all %d machine renewal slots are taken", r.opts.AtOnce)
		return autorenew.Busy, "", false
	}
	defer slot.Release()
	cctx, cancel := context.WithTimeout(ctx, r.renewTimeout)
	defer cancel()
	var out renewal.Outcome
	err = control.Call(cctx, control.SocketFor(r.root, r.rec.ID), control.OpRenew, req, &out)
	var refusal *control.Refusal
	switch {
	case errors.As(err, &refusal) && refusal.Code == control.CodeNotBetweenTurns:
		line.Detail = refusal.Message
		return autorenew.NotNow, "", false
	case errors.Is(err, control.ErrNotLive) || (err != nil && (ctx.Err() != nil || r.ended())):
		// The session ended, or this client is being stopped.
		return autorenew.Failed, "", true
	case err != nil:
		line.Detail = err.Error()
		return autorenew.Failed, "", false
	case out.State != renewal.StateDelivered && out.State != renewal.StateUndelivered:
		line.Detail = fmt.Sprintf("the renewal ended %s", out.State)
		return autorenew.Failed, "", false
	}
	line.Detail = fmt.Sprintf("renewal %s (attempt %d)", out.State, out.Attempt)
	return autorenew.Renewed, "", false
}

// remember keeps the asked renewal in the State.
func (r *policyRunner) remember(ev renewal.Policy, res autorenew.Result) {
	if res == autorenew.Busy || res == autorenew.NotNow {
		return
	}
	at := r.e.Now().UTC()
	r.state.LastAt, r.state.LastPercent, r.state.LastResult = &at, ev.TriggerPercent, res.String()
	if res == autorenew.Renewed {
		r.state.GaveUp, r.state.GaveUpDetail = "", ""
	}
}

// note writes the handoff note and wraps it into the renewal's payload,
// filling ev's note fields; nil and why when there is none. A handoff
// command that failed is reported (ReasonHandoffFailed) and the built-in
// note used.
func (r *policyRunner) note(ctx context.Context, ev *renewal.Policy) (*contract.PayloadEnvelope, string) {
	a, err := r.e.Registry().Lookup(r.rec.AdapterID)
	if err != nil {
		return nil, fmt.Sprintf("harness %q is not one this lifeloop knows", r.rec.AdapterID)
	}
	opts := handoff.Options{MaxBytes: r.opts.MaxNoteBytes}
	if r.opts.HandoffCmd != "" {
		opts.Command = &handoff.Command{Script: r.opts.HandoffCmd, Env: r.e.Environ, Timeout: r.opts.HandoffTimeout}
	}
	w, err := handoff.SessionNote(ctx, r.root, r.rec, a.HandoffReader(), opts)
	source := noteBuiltin
	switch {
	case opts.Command != nil && w.CommandFailed == nil && err == nil:
		source = noteCommand
	case w.CommandFailed != nil:
		source = noteBuiltinFallback
		fallback := *ev
		fallback.NoteSource = source
		detail := fmt.Sprintf("the handoff command failed (%v); the built-in note is used", w.CommandFailed)
		if err != nil {
			detail = fmt.Sprintf("the handoff command failed (%v) and there is no built-in note", w.CommandFailed)
		}
		r.record(ctx, autorenew.Report{Reason: autorenew.ReasonHandoffFailed, Detail: detail, Evidence: fallback})
	}
	if err != nil {
		switch {
		case errors.Is(err, handoff.ErrNoSessionFile):
			return nil, "no receipt names the harness's session file"
		case errors.Is(err, handoff.ErrNoReader):
			return nil, fmt.Sprintf("lifeloop cannot read the session files of harness %s into a note", r.rec.AdapterID)
		}
		return nil, err.Error()
	}
	p, err := notePayload([]byte(w.Note), policyNoteName, a.Manifest(), r.e.IDs.New("pay"))
	if err != nil {
		return nil, "the note " + err.Error()
	}
	p.ClientID = renewal.PolicyClientID
	store := &renewal.Store{Dir: statedir.ContinuationPath(r.root, r.rec.ID), Now: r.e.Now}
	if err := store.Validate(p); err != nil {
		return nil, "the note cannot be delivered: " + err.Error()
	}
	ev.NoteDigest, ev.NoteBytes, ev.NoteSource = *p.ContentDigest, len(w.Note), source
	return &p, ""
}

// record carries out a Record: a capability.degraded receipt through the
// wrapper's emit, its telemetry_summary {"policy": report}. gone is true
// when the session has no live wrapper any more.
func (r *policyRunner) record(ctx context.Context, rep autorenew.Report) (gone bool) {
	if rep.Evidence.Client == "" {
		rep.Evidence.Client = renewal.PolicyClientID
	}
	now := r.e.Now()
	detail := rep.Detail
	args := control.EmitArgs{
		Event:           contract.EventCapabilityDegraded,
		TelemetryDetail: map[string]any{"policy": rep.Map()},
		Degradations: []contract.CapabilityDegradation{{
			Capability:       "renewal.policy",
			PreviousSupport:  contract.SupportSynthesized,
			CurrentSupport:   contract.SupportUnavailable,
			ObservedAtEpochS: contract.Ptr(now.Unix()),
			Evidence:         &detail,
			RetryClass:       contract.Ptr(reportRetry(rep.Reason)),
		}},
	}
	cctx, cancel := context.WithTimeout(ctx, emitTimeout)
	defer cancel()
	err := control.Call(cctx, control.SocketFor(r.root, r.rec.ID), control.OpEmit, args, nil)
	if errors.Is(err, control.ErrNotLive) {
		r.say(decisionLine{Decision: "done", Detail: "the session has no live wrapper"})
		return true
	}
	if err != nil {
		r.warn("record %s: %v", rep.Reason, err)
	}
	r.say(decisionLine{Decision: "report", Reason: rep.Reason, Detail: rep.Detail, Policy: rep.Evidence.Map()})
	return false
}

// reportRetry is the retry class of a report's degradation.
func reportRetry(reason autorenew.Reason) contract.RetryClass {
	switch reason {
	case autorenew.ReasonFutile, autorenew.ReasonHandoffFailed:
		return contract.RetryAfterReconfigure
	case autorenew.ReasonRefused:
		return contract.RetryAfterOperator
	}
	return contract.RetrySafe
}

// pressureReason is "pressure 71 % ≥ 70 %" (or in tokens) from ev.
func pressureReason(ev renewal.Policy) string {
	if ev.ThresholdTokens > 0 {
		return fmt.Sprintf("pressure %d tokens ≥ %d tokens", ev.TriggerTokens, ev.ThresholdTokens)
	}
	return fmt.Sprintf("pressure %s %% ≥ %s %%", percentText(ev.TriggerPercent), percentText(ev.ThresholdPercent))
}

// percentText prints a percentage with at most one decimal.
func percentText(p float64) string {
	return strconv.FormatFloat(math.Round(p*10)/10, 'f', -1, 64)
}
