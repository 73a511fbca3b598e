package launcher

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/stream"
)

// The hook bridge: for one launch, `lifeloop run` points the harness's
// native hooks at `lifeloop host-hook`, which forwards each hook call over
// the control socket (control.OpHook) to the supervisor, or, for a
// harness that can post its hooks over HTTP, at the session's hook door
// (hookdoor.go), which hands them to the supervisor the same way. Nothing in the user's
// files changes: the harness (adapters.HookBridge) says which launch
// arguments do it, e.g. a settings file in the session folder that the
// harness merges with the user's own.

// hookBridgeArgs returns the arguments and the environment variables
// that install the hook bridge for launch t of adapter ad, writing what
// they need into t.SessionDir, with the hooks they install and the frame
// events those report natively (adapters.Adapter.LaunchHooks). All are
// nil when the adapter has no hooks lifeloop can add, or when the user
// already chose the mechanism.
func hookBridgeArgs(ad *adapters.Adapter, t adapters.BridgeTarget) (args, vars []string, spec *hooks.Spec, frames []contract.Event, err error) {
	b := ad.HookBridge()
	if b == nil {
		return nil, nil, nil, nil, nil
	}
	if args, err = b.BridgeArgs(t); err != nil {
		return nil, nil, nil, nil, err
	}
	if vars, err = ad.BridgeEnv(t); err != nil {
		return nil, nil, nil, nil, err
	}
	spec, frames = ad.LaunchHooks(t)
	return args, vars, spec, frames, nil
}

// BridgesFolder is the folder under the state root holding the hook
// bridge files every launch shares (adapters.BridgeTarget.SharedDir).
const BridgesFolder = "bridges"

// hookInput extracts what hooks.Map reads from a forwarded hook call.
func hookInput(spec *hooks.Spec, a hooks.HookArgs) ([]byte, error) {
	if spec.FromArgv(a.Hook) && len(a.Argv) > 0 {
		return []byte(a.Argv[len(a.Argv)-1]), nil
	}
	if len(a.Stdin) > 0 {
		return a.Stdin, nil
	}
	if a.StdinBase64 != "" {
		return base64.StdEncoding.DecodeString(a.StdinBase64)
	}
	return nil, nil
}

// onHook records the moments of one native hook call and returns what
// the harness should be told: the payloads the hook can place now,
// rendered as the {"payloads":[...]} transport envelope, and the hook's
// response carrying them as the harness reads it.
//
// A request that is no hook call of an adapter with hooks
// (hooks.CheckHookArgs) is answered with an error and records nothing.
func (s *supervisor) onHook(raw json.RawMessage) (hooks.HookReply, error) {
	a, err := hooks.DecodeHookArgs(raw)
	if err != nil {
		return hooks.HookReply{}, err
	}
	spec := s.cfg.hookSpec(a.Adapter)
	if err := hooks.CheckHookArgs(spec, a); err != nil {
		return hooks.HookReply{}, err
	}
	s.d.Step(stream.Fact{Kind: stream.HookCall, Now: s.cfg.Now()}) // the bridge is behind, not gone: what waits for it waits longer
	input, err := hookInput(spec, a)
	var mapped hooks.Mapped
	if err == nil {
		mapped, err = hooks.Map(spec, a.Adapter, a.Hook, input)
	}
	if err != nil {
		s.d.Step(stream.Fact{Kind: stream.Own, Moment: hookFailure(a, err, s.cfg.Now())})
		return hooks.HookReply{}, nil
	}
	// Some hooks also report turns of other threads (a hidden helper
	// thread); only the session's own thread counts once it is known.
	if mapped.OtherThreads && s.d.HarnessSession() != "" && mapped.HarnessSessionID != s.d.HarnessSession() {
		s.log.Info("hook: call for another thread ignored", "hook", a.Hook)
		return hooks.HookReply{}, nil
	}
	s.attendHook(input)
	var reply hooks.HookReply
	var deliver []contract.PayloadEnvelope
	for i, mm := range mapped.Moments {
		m := Moment{
			Event:            mm.Event,
			Frame:            mm.Frame,
			HarnessSessionID: mapped.HarnessSessionID,
			EventID:          mm.EventID,
			Summary:          withSource(mm.Summary, "hook", a.Hook),
		}
		canPlace := i == 0 && mapped.Accepts != "" && spec.CanInject(a.Hook)
		if !canPlace && m.Event != contract.EventSessionStarted {
			// Nothing to place: the moment is ordered with those that
			// wait, and the harness is answered at once.
			s.d.Step(stream.Fact{Kind: stream.Hook, Moment: m, Now: s.cfg.Now(), TranscriptOpen: s.obs != nil})
			reply.Receipts++
			continue
		}
		if canPlace {
			m.Payloads = append(m.Payloads, s.pendingFor(mm.Event)...)
		}
		// It takes the place of another source's report of it that
		// waits (a held session.started takes the hook's harness session
		// id; native wins), and is recorded now.
		rec, ok, err := s.recordHook(m, canPlace)
		if err != nil || !ok {
			continue
		}
		reply.Receipts++
		if canPlace {
			deliver = append(deliver, rec.placed(mapped.Accepts)...)
		}
	}
	if len(deliver) > 0 {
		env, err := contract.RenderTransport(deliver)
		if err == nil {
			reply.AdditionalContext = string(env)
		}
		s.dropPending(deliver)
	}
	reply.Response = string(hooks.Response(spec, a.Hook, reply.AdditionalContext))
	return reply, nil
}

// hookSpec returns the hooks of the adapter a hook call names: the
// session's own, or another the registry knows; nil when it has none.
func (c Config) hookSpec(adapterID string) *hooks.Spec {
	if ad := c.Adapter; ad != nil && (ad.ID == adapterID || slices.Contains(ad.Aliases, adapterID)) {
		return ad.Hooks()
	}
	if c.Registry != nil {
		if ad, err := c.Registry.Lookup(adapterID); err == nil {
			return ad.Hooks()
		}
	}
	return nil
}

// hookFailure is the receipt of a hook call lifeloop could not
// understand at time at: the harness still gets a valid empty response.
func hookFailure(a hooks.HookArgs, err error, at time.Time) Moment {
	fc := contract.FailureInvalidRequest
	evidence := fmt.Sprintf("hook %s/%s: %v", a.Adapter, a.Hook, err)
	now := at.Unix()
	rc := fc.DefaultRetry()
	return Moment{
		Event:   contract.EventCapabilityDegraded,
		Failure: &fc,
		Summary: map[string]any{"source": "hook", "hook": a.Hook},
		Degradations: []contract.CapabilityDegradation{{
			Capability: "hooks", PreviousSupport: contract.SupportNative, CurrentSupport: contract.SupportPartial,
			ObservedAtEpochS: &now, Evidence: &evidence, RetryClass: &rc,
		}},
	}
}

func withSource(sum map[string]any, source, hook string) map[string]any {
	out := make(map[string]any, len(sum)+2)
	for k, v := range sum {
		out[k] = v
	}
	out["source"] = source
	out["hook"] = hook
	return out
}

// pendingFor returns the payloads waiting for a hook that can place them
// at event.
func (s *supervisor) pendingFor(event contract.Event) []contract.PayloadEnvelope {
	at := s.cfg.HookPayloadsAt
	if at == "" {
		at = contract.EventSessionStarted
	}
	if len(s.hookPayloads) == 0 || event != at {
		return nil
	}
	return slices.Clone(s.hookPayloads)
}

func (s *supervisor) dropPending(delivered []contract.PayloadEnvelope) {
	s.hookPayloads = slices.DeleteFunc(s.hookPayloads, func(p contract.PayloadEnvelope) bool {
		return slices.ContainsFunc(delivered, func(d contract.PayloadEnvelope) bool { return d.PayloadID == p.PayloadID })
	})
}

// recordHook records a hook moment; when it can place payloads it goes
// through the synchronous-client path so client payloads come back now.
// ok is false when the stream already had the moment.
func (s *supervisor) recordHook(m Moment, canPlace bool) (hookRecord, bool, error) {
	sync := canPlace && s.cfg.HookRecorder != nil
	r, ok, err := s.d.Ask(stream.Fact{Kind: stream.Placing, Moment: m, Now: s.cfg.Now(), TranscriptOpen: s.obs != nil, Sync: sync})
	if err != nil || !ok {
		return hookRecord{}, ok, err
	}
	h := hookRecord{receiptID: r.Receipt.ReceiptID}
	if sync {
		h.payloads = append(slices.Clone(r.payloads), r.ClientPayloads...)
		h.decisions = r.Placements
	}
	return h, true, nil
}

// hookRecord is what recording a hook moment decided about payloads.
type hookRecord struct {
	receiptID string
	payloads  []contract.PayloadEnvelope // input payloads, then client payloads
	decisions []contract.PlacementDecision
}

// placed returns the payloads whose decision placed them at target.
func (h hookRecord) placed(target contract.ManifestPlacementClass) []contract.PayloadEnvelope {
	var out []contract.PayloadEnvelope
	for i, d := range h.decisions {
		if i >= len(h.payloads) || d.Target == nil || *d.Target != target {
			continue
		}
		if d.Outcome == contract.PlacementOutcomeDelivered || d.Outcome == contract.PlacementOutcomeDegraded {
			out = append(out, h.payloads[i])
		}
	}
	return out
}
