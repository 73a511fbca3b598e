package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// A background session (one a harness's service runs, which lifeloop
// records through its process wrapper: a telemetry_only session with the
// harness's pid) has no live `lifeloop run` to renew it: the harness's
// service owns the process. Its renewal goes through the harness's own
// commands (adapters.BackgroundRenewer): the session is stopped, its
// lifeloop session ends as the renewal's stop (its observer, the one
// writer of its ledger, reads the renewal.json this writes "stopping"
// before the stop: the renewal's session.ending, then its final
// session.ended, stopped_by renewal; package watch), and the same
// conversation is resumed in the background with the continuation as the
// resumed session's prompt; the resumed process comes through the
// process wrapper again and is recorded as a new lifeloop session bound
// to the same harness session, which the old session's renewal.json names
// (continued_in). The payload's receipt says delivered only once the
// harness's own transcript shows the prompt.

const (
	// bgRenewBound bounds each wait of a background renewal: the stopped
	// session's end, the resumed session's record, the prompt in the
	// transcript (each took under 3 s on an idle machine).
	bgRenewBound = 90 * time.Second
	bgRenewPoll  = 200 * time.Millisecond
)

// backgroundRenewer returns the adapter of rec when rec is one of its
// background sessions lifeloop records (the process wrapper's observer:
// telemetry_only, with the session's pid and harness session) and the
// harness renews those, else nil.
func backgroundRenewer(e *env, rec statedir.SessionRecord) *adapters.Adapter {
	if rec.IntegrationMode != string(contract.ModeTelemetryOnly) || rec.Pid <= 0 || len(rec.HarnessSessionIDs) == 0 {
		return nil
	}
	ad, err := e.Registry().Lookup(rec.AdapterID)
	if err != nil || ad.ProcessWrapped() == nil || ad.BackgroundRenewer() == nil {
		return nil
	}
	return ad
}

// wrappedEnv is env with lifeloop as ad's process wrapper, chaining the
// person's own, as `run` sets it for the harness it starts: the resume may
// start the harness's service anew (it ends when idle), and a service
// started without the wrapper would run the resumed session unrecorded.
// env unchanged when the person's value cannot be chained (the harness
// then refuses it too) or already is lifeloop's.
func wrappedEnv(ad *adapters.Adapter, env []string) []string {
	vars, err := ad.ProcessWrapped().WrapperEnv(func(chain []string) []string { return processWrapperOrNone(ad.ID, chain) }, env)
	if err != nil || len(vars) == 0 {
		return env
	}
	out := slices.Clone(env)
	for _, v := range vars {
		name, _, _ := strings.Cut(v, "=")
		out = slices.DeleteFunc(out, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
		out = append(out, v)
	}
	return out
}

// renewBackground renews background session rec with req's payloads
// through br (see above). It refuses, touching nothing, a fresh renewal
// (the harness continues a background session; a new one is the
// harness's own start) and payloads that cannot be a prompt.
func renewBackground(ctx context.Context, e *env, root string, rec statedir.SessionRecord, ad *adapters.Adapter, req renewal.Request, fresh bool) (renewal.Outcome, error) {
	br := ad.BackgroundRenewer()
	if fresh {
		return renewal.Outcome{}, exitf(exitcode.Failed, "%s: session %s is a background session: its renewal resumes the same conversation (give --resume or neither)", contract.FailureCapabilityUnsupported, rec.ID)
	}
	if len(req.Payloads) == 0 {
		return renewal.Outcome{}, exitf(exitcode.Failed, "%s: session %s is a background session: its renewal needs a continuation (--note FILE), which becomes the resumed session's prompt", contract.FailureInvalidRequest, rec.ID)
	}
	var bodies []string
	for _, p := range req.Payloads {
		ok := p.Body != nil && p.ContentEncoding == contract.EncodingUTF8 && slices.ContainsFunc(p.AcceptablePlacements, func(a contract.AcceptablePlacement) bool {
			return a.Placement == contract.PlacementPrePromptFrame
		})
		if !ok {
			return renewal.Outcome{}, exitf(exitcode.Failed, "%s: payload %s cannot be a background session's prompt (it needs a utf8 body that accepts %s)", contract.FailureCapabilityUnsupported, p.PayloadID, contract.PlacementPrePromptFrame)
		}
		bodies = append(bodies, *p.Body)
	}
	prompt := strings.Join(bodies, "\n\n")
	harness := rec.HarnessSessionIDs[len(rec.HarnessSessionIDs)-1]
	statusPath := renewal.StatusPath(statedir.SessionDir(root, rec.ID))
	prev, _ := renewal.ReadStatus(statusPath)
	started := e.Now()
	st := renewal.Status{
		State: renewal.StateStopping, Attempt: prev.Attempt + 1, Resume: true, Reason: req.Reason,
		HarnessSessionID: harness, StartedAt: &started, UpdatedAt: started,
	}
	for _, p := range req.Payloads {
		st.PayloadIDs = append(st.PayloadIDs, p.PayloadID)
	}
	save := func() { st.UpdatedAt = e.Now(); _ = renewal.WriteStatus(statusPath, st) }
	fail := func(class contract.FailureClass, format string, args ...any) (renewal.Outcome, error) {
		at := e.Now()
		msg := fmt.Sprintf(format, args...)
		st.State, st.FinishedAt = renewal.StateFailed, &at
		st.LastError = &renewal.StatusError{Message: msg, FailureClass: class, RetryClass: class.DefaultRetry(), At: at}
		save()
		return renewal.Outcome{}, exitf(exitcode.Failed, "%s: session %s: %s", class, rec.ID, msg)
	}
	save()

	if err := br.StopBackground(ctx, e.Environ, harness); err != nil {
		return fail(contract.FailureAdapterUnavailable, "the harness did not stop the background session: %v", err)
	}
	if !waitUntil(ctx, func() bool {
		r, err := statedir.ReadSession(root, rec.ID)
		return err == nil && r.State.IsTerminal()
	}) {
		return fail(contract.FailureAdapterUnavailable, "the stopped background session's end was not recorded within %s", bgRenewBound)
	}

	st.State = renewal.StateRelaunching
	save()
	since := e.Now()
	if err := br.ResumeBackground(ctx, wrappedEnv(ad, e.Environ), rec.Cwd, harness, prompt); err != nil {
		return fail(contract.FailureAdapterUnavailable, "the harness did not resume the background session: %v", err)
	}
	var next string
	if !waitUntil(ctx, func() bool {
		recs, _ := statedir.ListSessions(root)
		for _, r := range recs {
			if r.ID != rec.ID && r.AdapterID == rec.AdapterID && slices.Contains(r.HarnessSessionIDs, harness) && r.StartedAt != nil && !r.StartedAt.Before(since.Add(-time.Second)) {
				next = r.ID
				return true
			}
		}
		return false
	}) {
		return fail(contract.FailureAdapterUnavailable, "no lifeloop session recorded the resumed background session within %s (is lifeloop still the harness's process wrapper?)", bgRenewBound)
	}
	st.ContinuedIn = next
	delivered := waitUntil(ctx, func() bool { return br.PromptDelivered(e.Environ, rec.Cwd, harness, prompt, since.Add(-time.Second)) })

	status := contract.PlacementOutcomeDelivered
	if !delivered {
		status = contract.PlacementOutcomeFailed
	}
	for _, p := range req.Payloads {
		st.PayloadReceipts = append(st.PayloadReceipts, contract.PayloadReceipt{
			PayloadID: p.PayloadID, PayloadKind: p.PayloadKind, Placement: contract.PlacementPrePromptFrame,
			Status: status, ByteSize: p.ByteSize, ContentDigest: p.ContentDigest,
		})
	}
	if !delivered {
		return fail(contract.FailurePlacementUnavailable, "the resumed background session (lifeloop session %s) does not show the continuation as its prompt within %s: it was handed to the harness and may still arrive", next, bgRenewBound)
	}
	at := e.Now()
	st.State, st.FinishedAt = renewal.StateDelivered, &at
	save()
	return renewal.Outcome{State: st.State, Attempt: st.Attempt, Resumed: true, Started: true, PayloadReceipts: st.PayloadReceipts, ContinuedIn: next}, nil
}

// waitUntil polls ok every bgRenewPoll until it holds (true), ctx ends or
// bgRenewBound passes (false).
func waitUntil(ctx context.Context, ok func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, bgRenewBound)
	defer cancel()
	tk := time.NewTicker(bgRenewPoll)
	defer tk.Stop()
	for !ok() {
		select {
		case <-ctx.Done():
			return ok()
		case <-tk.C:
		}
	}
	return true
}
