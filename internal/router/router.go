// Package router is the one lifecycle pipeline every entry point (run,
// watch, emit, event invoke, host-hook) goes through:
//
//	validate → adapter manifest → negotiate (when the client declared
//	requirements) → resolve payload placements → invoke synchronous
//	clients → synthesize the receipt → append to the ledger (when one is
//	configured; else sequence stays null) → write to sinks → hand the
//	receipt to asynchronous clients.
//
// The router owns receipt synthesis: a new receipt_id (lfr_) per receipt;
// the harness's event_id when it has one, else one derived from the
// idempotency key when there is one (see keyedEventID), else a
// synthesized evt_ id; one invocation_id (inv_) shared by every receipt of
// one invocation; parent_receipt_id for causally linked receipts, and payload_receipts
// that echo each placed payload's id, kind, placement, status, size and
// digest (never computed here). Ids come from an injected ids.Source and
// time from an injected clock.
//
// Status of the receipt, from strongest to weakest: a Failure override in
// the moment; a refused negotiation (capability_unsupported or
// operator_required); an invalid input or payload (invalid_request); a
// required placement that cannot be met (placement_unavailable or
// payload_too_large); a synchronous client failure (see package callback)
// or a client's own status=failed response; otherwise the strongest client
// status (degraded > delivered > skipped > observed), downgraded to
// degraded when a preferred capability or a payload placement degraded.
// With no synchronous client the status is observed (or degraded).
// Refusals happen before any client is invoked, synchronous or
// asynchronous.
package router

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/callback"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
)

// DefaultClientID is the receipt client_id when Config.ClientID is empty.
const DefaultClientID = "lifeloop"

// Warning codes the router puts on receipts.
const (
	WarnLedgerFailed      = "ledger_append_failed"
	WarnLedgerDelayed     = "ledger_write_delayed"
	WarnAsyncDropped      = "client_queue_dropped"
	WarnClientFailed      = "client_failed"
	WarnPayloadDegraded   = "payload_placement_degraded"
	WarnPayloadSkipped    = "payload_placement_skipped"
	WarnPayloadNotDecided = "payload_invalid"
)

// Client is a synchronous or asynchronous callback client;
// *callback.Invoker is one.
type Client interface {
	Invoke(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure)
}

// Appender is the durable receipt ledger; *ledger.Ledger is one.
type Appender interface {
	AppendWith(r contract.LifecycleReceipt, o ledger.AppendOptions) (contract.LifecycleReceipt, ledger.AppendResult, error)
}

// Sink receives every recorded receipt and must not block;
// *sink.Sink is one.
type Sink interface {
	Write(r contract.LifecycleReceipt)
}

// warningSource is implemented by sinks that report their own trouble
// (failure streaks, drops) as warnings for the next receipt.
type warningSource interface {
	TakeWarnings() []contract.Warning
}

// Config configures a Router. Manifest and Mode are required.
type Config struct {
	// Manifest is the resolved adapter's manifest (e.g.
	// builtin.Default().Lookup(id)).Manifest()).
	Manifest contract.AdapterManifest
	// Mode is the integration mode of this entry point.
	Mode contract.IntegrationMode
	// ClientID is the receipts' client_id (default DefaultClientID).
	ClientID string
	// Require, when set, is negotiated against Manifest once, in New; a
	// refusal fails every Route before any client runs.
	Require *contract.CapabilityRequest
	// Ledger records receipts and assigns sequence; nil leaves sequence
	// null.
	Ledger Appender
	// Clients are invoked synchronously, in order, for every Route; their
	// responses shape the receipt.
	Clients []Client
	// AsyncClients are invoked off the caller's path after the receipt is
	// recorded (see AsyncClients). Failures become receipts of their own.
	AsyncClients []Client
	// AsyncQueue bounds each async client's queue (default
	// DefaultAsyncQueue).
	AsyncQueue int
	// Sinks receive every recorded receipt.
	Sinks []Sink
	// InvocationID is shared by every receipt this router synthesizes when
	// the Input names none; default a fresh inv_ id.
	InvocationID string
	// Now is the clock (default time.Now); IDs mints ids (default a ULID
	// source of the router's own on Now).
	Now func() time.Time
	IDs ids.Source
	// Logger receives diagnostics (never payload bodies); nil discards.
	Logger *slog.Logger
}

// Result is the outcome of one Route.
type Result struct {
	// Receipt is the receipt as recorded (with its sequence when a ledger
	// is configured; the original receipt on an idempotent replay).
	Receipt contract.LifecycleReceipt
	// Extra are receipts the ledger added before Receipt (a
	// receipt.gap_detected).
	Extra []contract.LifecycleReceipt
	// Placements are the placement decisions for the moment's Payloads followed
	// by those for ClientPayloads; the caller delivers what they allow.
	Placements []contract.PlacementDecision
	// ClientPayloads are the payloads synchronous clients returned.
	ClientPayloads []contract.PayloadEnvelope
	// Replayed is true when the ledger recognised an identical redelivery
	// of an idempotency key; nothing new was recorded or written to sinks.
	Replayed bool
}

// Router runs the pipeline. It is safe for concurrent use.
type Router struct {
	cfg         Config
	negotiation *contract.NegotiationResult
	async       *AsyncClients
	log         *slog.Logger

	mu      sync.Mutex
	pending []contract.Warning // for the next receipt
}

// New validates cfg, negotiates Require once and starts the asynchronous
// client workers. Close stops them.
func New(cfg Config) (*Router, error) {
	if cfg.Manifest.AdapterID == "" {
		return nil, errors.New("router: no adapter manifest; resolve the adapter first (Registry.Lookup)")
	}
	if !cfg.Mode.Valid() {
		return nil, fmt.Errorf("router: unknown integration mode %q", cfg.Mode)
	}
	if cfg.ClientID == "" {
		cfg.ClientID = DefaultClientID
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IDs == nil {
		cfg.IDs = ids.NewULIDSource(cfg.Now, nil)
	}
	if cfg.InvocationID == "" {
		cfg.InvocationID = cfg.IDs.New(ids.PrefixInvocation)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r := &Router{cfg: cfg, log: log}
	if cfg.Require != nil {
		if err := cfg.Require.Validate(); err != nil {
			return nil, fmt.Errorf("router: capability request: %w", err)
		}
		n := contract.Negotiate(cfg.Manifest, cfg.Mode, *cfg.Require)
		r.negotiation = &n
	}
	if len(cfg.AsyncClients) > 0 {
		r.async = newAsyncClients(r, cfg.AsyncClients, cfg.AsyncQueue)
	}
	return r, nil
}

// Negotiation returns the result of negotiating Config.Require, or nil
// when none was configured.
func (r *Router) Negotiation() *contract.NegotiationResult { return r.negotiation }

// Close drains the asynchronous clients' queues, waiting at most until
// ctx is done (see AsyncClients.Close). It is idempotent.
func (r *Router) Close(ctx context.Context) error {
	if r.async == nil {
		return nil
	}
	return r.async.Close(ctx)
}

// synth accumulates the receipt's status while the pipeline runs.
type synth struct {
	status   contract.ReceiptStatus
	failure  *contract.FailureClass
	retry    *contract.RetryClass
	warnings []contract.Warning
	degraded bool
}

// failOnce records the first failure; later ones only add warnings.
func (s *synth) failOnce(fc contract.FailureClass, rc contract.RetryClass) {
	if s.failure != nil {
		return
	}
	s.failure, s.retry = &fc, &rc
}

// Route runs in through the pipeline and returns the recorded receipt. A
// refused or failed moment is a failed receipt, not an error; the error is
// non-nil only when no receipt can be synthesized (an unknown event, or
// receipt.emitted, which never produces a receipt) or recorded (a ledger
// failure: the receipt is then still returned, unsequenced, and written to
// sinks with a ledger_append_failed warning).
//
// The stages, in order: check (validate, manifest, negotiation) → place
// the input's payloads → ask the synchronous clients (only when nothing
// refused the moment) → synthesize the receipt → record it (ledger, then
// sinks) → hand it to the asynchronous clients.
func (r *Router) Route(ctx context.Context, in moment.Moment) (Result, error) {
	if err := routable(in.Event); err != nil {
		return Result{}, err
	}
	now := r.cfg.Now()
	s := &synth{status: contract.StatusObserved}
	var res Result

	valid := r.check(in, s)
	var payloadReceipts []contract.PayloadReceipt
	var deliver []contract.PayloadEnvelope
	if valid {
		payloadReceipts, deliver = r.place(in.Event, in.Payloads, now, s, &res)
	}
	// Payloads placed elsewhere (e.g. by a renewal at relaunch) are echoed
	// as their placer recorded them.
	payloadReceipts = append(payloadReceipts, in.PayloadReceipts...)

	eventID, invocationID := r.eventID(in), r.invocationID(in)
	env := r.envelope(in, eventID, invocationID, deliver)
	refused := s.failure != nil // validation, negotiation or placement said no
	if !refused {
		payloadReceipts = append(payloadReceipts, r.askClients(ctx, in.Event, env, now, s, &res)...)
	}

	rc := r.synthesize(in, s, eventID, invocationID, now, payloadReceipts)
	rec, err := r.record(rc, in)
	res.Receipt, res.Extra, res.Replayed = rec.receipt, rec.extra, rec.replayed
	// Asynchronous clients hear of every new moment except those lifeloop
	// refused before dispatch and idempotency conflicts.
	if err == nil && !rec.replayed && !rec.conflict && !refused && r.async != nil {
		r.async.enqueue(rec.receipt, env)
	}
	return res, err
}

// routable says why ev can never make a receipt, or nil.
func routable(ev contract.Event) error {
	if ev == contract.EventReceiptEmitted {
		return errors.New("receipt.emitted is a notification event and never produces a receipt")
	}
	if !ev.Valid() {
		return fmt.Errorf("unknown event %q; known: %v", ev, contract.Events)
	}
	return nil
}

// check validates in and applies the negotiation verdict, recording
// refusals and degradations in s. It reports whether in itself is valid.
func (r *Router) check(in moment.Moment, s *synth) bool {
	validErr := r.validate(in)
	if validErr != nil {
		s.failOnce(contract.FailureInvalidRequest, contract.FailureInvalidRequest.DefaultRetry())
		s.warnings = append(s.warnings, contract.Warning{Code: string(contract.FailureInvalidRequest), Message: validErr.Error()})
	}
	n := r.negotiation
	switch {
	case n == nil:
	case !n.Verdict.Proceed:
		fc := contract.FailureCapabilityUnsupported
		if n.Verdict.FailureClass != nil {
			fc = *n.Verdict.FailureClass
		}
		rc := fc.DefaultRetry()
		if n.Verdict.RetryClass != nil {
			rc = *n.Verdict.RetryClass
		}
		s.failOnce(fc, rc)
		for _, reason := range n.Verdict.Reasons {
			s.warnings = append(s.warnings, contract.Warning{Code: string(fc), Message: reason})
		}
	case len(n.Warnings) > 0:
		s.degraded = true
		s.warnings = append(s.warnings, n.Warnings...)
	}
	return validErr == nil
}

// eventID is the harness's event id, else one derived from the
// idempotency key, else a fresh one.
func (r *Router) eventID(in moment.Moment) string {
	switch {
	case in.EventID != "":
		return in.EventID
	case in.IdempotencyKey != nil && *in.IdempotencyKey != "":
		return keyedEventID(r.cfg.ClientID, r.cfg.Manifest.AdapterID, *in.IdempotencyKey)
	default:
		return r.cfg.IDs.New(ids.PrefixEvent)
	}
}

// invocationID is the input's invocation id, else the router's.
func (r *Router) invocationID(in moment.Moment) string {
	if in.InvocationID != "" {
		return in.InvocationID
	}
	return r.cfg.InvocationID
}

// askClients invokes the synchronous clients in order with env; their
// statuses, failures and warnings go to s, the payloads they return to
// res (placed here; their receipts are returned).
func (r *Router) askClients(ctx context.Context, ev contract.Event, env contract.DispatchEnvelope, now time.Time, s *synth, res *Result) []contract.PayloadReceipt {
	if len(r.cfg.Clients) == 0 {
		return nil
	}
	best := contract.StatusObserved
	for i, c := range r.cfg.Clients {
		resp, f := c.Invoke(ctx, env)
		if f != nil {
			s.failOnce(f.Class, f.Retry)
			s.warnings = append(s.warnings, f.Warning())
			continue
		}
		s.warnings = append(s.warnings, resp.Warnings...)
		if resp.Status == contract.StatusFailed {
			fc, rc := responseFailure(resp)
			s.failOnce(fc, rc)
			s.warnings = append(s.warnings, contract.Warning{Code: WarnClientFailed,
				Message: fmt.Sprintf("%s answered status failed (%s)", clientLabel(c, i), fc)})
			continue
		}
		best = strongest(best, resp.Status)
		res.ClientPayloads = append(res.ClientPayloads, resp.ClientPayloads...)
	}
	s.status = best
	if len(res.ClientPayloads) == 0 {
		return nil
	}
	pr, _ := r.place(ev, res.ClientPayloads, now, s, res)
	return pr
}

// synthesize builds the receipt of in from what the stages before found.
func (r *Router) synthesize(in moment.Moment, s *synth, eventID, invocationID string, now time.Time, payloadReceipts []contract.PayloadReceipt) contract.LifecycleReceipt {
	rc := contract.LifecycleReceipt{
		SchemaVersion:          contract.ReceiptSchemaVersion,
		ReceiptID:              r.cfg.IDs.New(ids.PrefixReceipt),
		IdempotencyKey:         in.IdempotencyKey,
		ClientID:               r.cfg.ClientID,
		AdapterID:              r.cfg.Manifest.AdapterID,
		InvocationID:           invocationID,
		Event:                  in.Event,
		EventID:                eventID,
		ParentReceiptID:        in.Parent,
		IntegrationMode:        r.cfg.Mode,
		AtEpochS:               now.Unix(),
		HarnessSessionID:       optional(in.HarnessSessionID),
		HarnessRunID:           optional(in.HarnessRunID),
		HarnessTaskID:          optional(in.HarnessTaskID),
		PayloadReceipts:        payloadReceipts,
		TelemetrySummary:       in.Summary,
		CapabilityDegradations: in.Degradations,
	}
	switch {
	case in.Failure != nil:
		rc.Status = contract.StatusFailed
		rc.FailureClass = in.Failure
		retry := in.Failure.DefaultRetry()
		if in.Retry != nil {
			retry = *in.Retry
		}
		rc.RetryClass = &retry
	case s.failure != nil:
		rc.Status, rc.FailureClass, rc.RetryClass = contract.StatusFailed, s.failure, s.retry
	case in.Status != "" && in.Status != contract.StatusFailed:
		rc.Status = in.Status
	case s.degraded && s.status != contract.StatusSkipped:
		rc.Status = contract.StatusDegraded
	default:
		rc.Status = s.status
	}
	rc.Warnings = slices.Concat(in.Warnings, s.warnings, r.takeWarnings())
	return rc
}

// recorded is what record did with a receipt.
type recorded struct {
	receipt  contract.LifecycleReceipt   // as stored (or the original, on a replay)
	extra    []contract.LifecycleReceipt // receipts the ledger added before it
	replayed bool                        // identical redelivery: nothing new stored or written
	conflict bool                        // idempotency key reused: the ledger stored a failed receipt instead
}

// record appends rc to the ledger (when configured) and writes it, and
// any receipts the ledger added, to the sinks.
func (r *Router) record(rc contract.LifecycleReceipt, in moment.Moment) (recorded, error) {
	var out recorded
	var appendErr error
	if r.cfg.Ledger != nil {
		var o ledger.AppendOptions
		if in.ExternalSequence != nil {
			o.ExternalSequence = in.ExternalSequence
			o.ExternalScope = in.ExternalScope
			if o.ExternalScope == "" {
				o.ExternalScope = rc.AdapterID + ":" + in.HarnessSessionID
			}
		}
		stored, ar, err := r.cfg.Ledger.AppendWith(rc, o)
		if err == nil {
			if ar.Outcome == ledger.Replayed {
				return recorded{receipt: stored, replayed: true}, nil
			}
			rc, out.extra, out.conflict = stored, ar.Extra, ar.Outcome == ledger.Conflict
			if ar.Outcome == ledger.Spooled {
				// The ledger holds it until its storage takes writes
				// again; readers of the sinks learn why it has no
				// sequence yet.
				rc.Warnings = append(rc.Warnings, contract.Warning{Code: WarnLedgerDelayed,
					Message: "the receipt ledger cannot be written now; this receipt is held in memory and gets its sequence when it is recorded"})
			}
		} else {
			appendErr = fmt.Errorf("recording %s receipt %s: %w", rc.Event, rc.ReceiptID, err)
			r.log.Error("ledger append failed", "event", string(rc.Event), "receipt_id", rc.ReceiptID, "err", err)
			rc.Warnings = append(rc.Warnings, contract.Warning{Code: WarnLedgerFailed,
				Message: "the receipt ledger could not record this receipt; its sequence is unknown"})
		}
	}
	for _, sk := range r.cfg.Sinks {
		for _, x := range out.extra {
			sk.Write(x)
		}
		sk.Write(rc)
	}
	out.receipt = rc
	return out, appendErr
}

// validate checks the input's own shape (payloads are checked one by one
// in place).
func (r *Router) validate(in moment.Moment) error {
	if in.Event.IsFrame() && in.Frame == nil {
		return fmt.Errorf("%s needs a frame context (frame id)", in.Event)
	}
	if in.Frame != nil {
		if err := in.Frame.Validate(); err != nil {
			return fmt.Errorf("frame_context: %w", err)
		}
	}
	if in.IdempotencyKey != nil && *in.IdempotencyKey == "" {
		return errors.New("idempotency_key is empty; omit it or give a key")
	}
	if in.Event == contract.EventCapabilityDegraded && len(in.Degradations) == 0 {
		return errors.New("capability.degraded needs at least one capability degradation")
	}
	for i, d := range in.Degradations {
		if err := d.Validate(); err != nil {
			return fmt.Errorf("capability_degradations[%d]: %w", i, err)
		}
	}
	return nil
}

// place checks and places payloads, returning their receipts and the
// payloads to deliver; failures are recorded in s.
func (r *Router) place(ev contract.Event, payloads []contract.PayloadEnvelope, now time.Time, s *synth, res *Result) ([]contract.PayloadReceipt, []contract.PayloadEnvelope) {
	var receipts []contract.PayloadReceipt
	var deliver []contract.PayloadEnvelope
	site := contract.HookSite(ev)
	for _, p := range payloads {
		if err := p.Check(now); err != nil {
			s.failOnce(contract.FailureInvalidRequest, contract.FailureInvalidRequest.DefaultRetry())
			s.warnings = append(s.warnings, contract.Warning{Code: WarnPayloadNotDecided,
				Message: fmt.Sprintf("payload %s: %v", p.PayloadID, err)})
			pr := contract.PayloadReceipt{PayloadID: p.PayloadID, PayloadKind: p.PayloadKind, ByteSize: p.ByteSize,
				ContentDigest: p.ContentDigest, Status: contract.PlacementOutcomeFailed}
			if len(p.AcceptablePlacements) > 0 {
				pr.Placement = p.AcceptablePlacements[0].Placement
			}
			if pr.PayloadID != "" && pr.PayloadKind != "" && pr.Placement.Valid() {
				receipts = append(receipts, pr)
			}
			continue
		}
		d := site.Resolve(r.cfg.Manifest, p)
		res.Placements = append(res.Placements, d)
		receipts = append(receipts, d.Receipt(p))
		switch d.Outcome {
		case contract.PlacementOutcomeFailed:
			fc := contract.FailurePlacementUnavailable
			if d.FailureClass != nil {
				fc = *d.FailureClass
			}
			rc := fc.DefaultRetry()
			if d.RetryClass != nil {
				rc = *d.RetryClass
			}
			s.failOnce(fc, rc)
			s.warnings = append(s.warnings, contract.Warning{Code: string(fc), Message: fmt.Sprintf("payload %s: %s", p.PayloadID, d.Reason)})
		case contract.PlacementOutcomeDegraded:
			s.degraded = true
			s.warnings = append(s.warnings, contract.Warning{Code: WarnPayloadDegraded, Message: fmt.Sprintf("payload %s: %s", p.PayloadID, d.Reason)})
			deliver = append(deliver, p)
		case contract.PlacementOutcomeSkipped:
			s.warnings = append(s.warnings, contract.Warning{Code: WarnPayloadSkipped, Message: fmt.Sprintf("payload %s: %s", p.PayloadID, d.Reason)})
		default:
			deliver = append(deliver, p)
		}
	}
	return receipts, deliver
}

// envelope builds the dispatch envelope clients receive.
func (r *Router) envelope(in moment.Moment, eventID, invocationID string, payloads []contract.PayloadEnvelope) contract.DispatchEnvelope {
	req := contract.CallbackRequest{
		SchemaVersion:    contract.Version,
		Event:            in.Event,
		EventID:          eventID,
		AdapterID:        r.cfg.Manifest.AdapterID,
		AdapterVersion:   r.cfg.Manifest.AdapterVersion,
		IntegrationMode:  r.cfg.Mode,
		InvocationID:     invocationID,
		HarnessSessionID: optional(in.HarnessSessionID),
		HarnessRunID:     optional(in.HarnessRunID),
		HarnessTaskID:    optional(in.HarnessTaskID),
		FrameContext:     in.Frame,
		IdempotencyKey:   in.IdempotencyKey,
		Metadata:         in.Metadata,
	}
	if in.Event == contract.EventReceiptEmitted {
		req.IdempotencyKey = nil
	}
	for _, p := range payloads {
		size := p.ByteSize
		req.PayloadRefs = append(req.PayloadRefs, contract.PayloadRef{
			PayloadID: p.PayloadID, PayloadKind: p.PayloadKind, ContentDigest: p.ContentDigest, ByteSize: &size,
		})
	}
	return contract.DispatchEnvelope{SchemaVersion: contract.Version, Request: req, Payloads: payloads}
}

// takeWarnings returns the queued warnings and those the sinks and async
// clients raised since the last receipt.
func (r *Router) takeWarnings() []contract.Warning {
	r.mu.Lock()
	w := r.pending
	r.pending = nil
	r.mu.Unlock()
	for _, sk := range r.cfg.Sinks {
		if ws, ok := sk.(warningSource); ok {
			w = append(w, ws.TakeWarnings()...)
		}
	}
	if r.async != nil {
		w = append(w, r.async.takeWarnings()...)
	}
	return w
}

// strongest orders client statuses: degraded > delivered > skipped >
// observed.
func strongest(a, b contract.ReceiptStatus) contract.ReceiptStatus {
	rank := map[contract.ReceiptStatus]int{
		contract.StatusObserved: 0, contract.StatusSkipped: 1, contract.StatusDelivered: 2, contract.StatusDegraded: 3,
	}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// keyedEventID derives the event_id of a moment that has no harness event
// id but an idempotency key: the same (client, adapter, key) always names
// the same event, so a redelivery from another process has identical
// content and the ledger recognises it as a replay instead of a conflict.
// The id is a digest of the key scope, never the key itself.
func keyedEventID(client, adapter, key string) string {
	sum := sha256.Sum256([]byte(client + "\x00" + adapter + "\x00" + key))
	return ids.PrefixEvent + "_k" + strings.ToUpper(base32.HexEncoding.WithPadding(base32.NoPadding).EncodeToString(sum[:16]))
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// clientLabel names a client in warnings: its Name() when it has one,
// else its position.
func clientLabel(c Client, i int) string {
	if n, ok := c.(interface{ Name() string }); ok {
		return "client " + n.Name()
	}
	return fmt.Sprintf("client #%d", i+1)
}

// responseFailure reads the classes of a status=failed response; the
// contract's decoder guarantees both, the fallbacks only guard against a
// Client implementation that skipped it.
func responseFailure(resp contract.CallbackResponse) (contract.FailureClass, contract.RetryClass) {
	fc := contract.FailureTransportError
	if resp.FailureClass != nil {
		fc = *resp.FailureClass
	}
	rc := fc.DefaultRetry()
	if resp.RetryClass != nil {
		rc = *resp.RetryClass
	}
	return fc, rc
}
