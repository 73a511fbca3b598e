package contract

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// prefixedHex reports whether s is prefix and then n lowercase hex digits
// (sha256:<64>, evt_<16>, trc_<16>). A loop rather than package-level
// regular expressions: their compilation ran on every lifeloop start.
func prefixedHex(s, prefix string, n int) bool {
	hex, ok := strings.CutPrefix(s, prefix)
	if !ok || len(hex) != n {
		return false
	}
	for i := range len(hex) {
		if c := hex[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// within prefixes the field path of a *ValidationError with parent.
func within(parent string, err error) error {
	if err == nil {
		return nil
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		f := parent
		if ve.Field != "" {
			if strings.HasPrefix(ve.Field, "[") {
				f = parent + ve.Field
			} else {
				f = parent + "." + ve.Field
			}
		}
		return &ValidationError{Field: f, Msg: ve.Msg}
	}
	return fmt.Errorf("%s: %w", parent, err)
}

func indexed(parent string, i int) string { return parent + "[" + strconv.Itoa(i) + "]" }

func nonEmpty(field, v string) error {
	if v == "" {
		return invalid(field, "must not be an empty string")
	}
	return nil
}

func nonEmptyPtr(field string, v *string) error {
	if v != nil && *v == "" {
		return invalid(field, "must not be an empty string; omit it or use null instead")
	}
	return nil
}

func digestOK(field string, v *string) error {
	if v != nil && !prefixedHex(*v, "sha256:", 64) {
		return invalid(field, "must be \"sha256:\" followed by 64 lowercase hex digits, got %q", *v)
	}
	return nil
}

type enum interface {
	~string
	Valid() bool
}

func enumOK[T enum](field string, v T, all []T) error {
	if v.Valid() {
		return nil
	}
	allowed := make([]string, len(all))
	for i, a := range all {
		allowed[i] = string(a)
	}
	return invalid(field, "unknown value %q; allowed: %s", string(v), strings.Join(allowed, ", "))
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func schemaVersionOK(field, got string) error {
	if got != Version {
		return invalid(field, "unsupported contract version %q; this implementation speaks %q", got, Version)
	}
	return nil
}

// Validate checks the frame rules: a non-empty frame_id, and a parent
// exactly when the frame is a subcall.
func (c FrameContext) Validate() error {
	if err := firstErr(
		nonEmpty("frame_id", c.FrameID),
		nonEmptyPtr("parent_frame_id", c.ParentFrameID),
		enumOK("frame_class", c.FrameClass, FrameClasses),
	); err != nil {
		return err
	}
	switch {
	case c.FrameClass == FrameTopLevel && c.ParentFrameID != nil:
		return invalid("parent_frame_id", "frame_class top_level must not carry parent_frame_id")
	case c.FrameClass == FrameSubcall && c.ParentFrameID == nil:
		return invalid("parent_frame_id", "frame_class subcall requires parent_frame_id")
	case c.ParentFrameID != nil && *c.ParentFrameID == c.FrameID:
		return invalid("parent_frame_id", "a frame cannot be its own parent")
	}
	return nil
}

// Validate checks both enum values.
func (p AcceptablePlacement) Validate() error {
	return firstErr(
		enumOK("placement", p.Placement, PlacementClasses),
		enumOK("requirement", p.Requirement, RequirementLevels),
	)
}

// Validate checks the identifiers and the digest form.
func (r PayloadRef) Validate() error {
	return firstErr(
		nonEmpty("payload_id", r.PayloadID),
		nonEmpty("payload_kind", r.PayloadKind),
		digestOK("content_digest", r.ContentDigest),
	)
}

// Validate checks the envelope's declared shape: schema version, non-empty
// identifiers, a known content_encoding, exactly one of body and body_ref,
// a well-formed digest, a non-negative expiry and at least one acceptable
// placement. Content checks that need the body or the clock are in Check.
func (p PayloadEnvelope) Validate() error {
	if err := p.SchemaVersion.check("schema_version"); err != nil {
		return err
	}
	if err := firstErr(
		nonEmpty("payload_id", p.PayloadID),
		nonEmpty("client_id", p.ClientID),
		nonEmpty("payload_kind", p.PayloadKind),
		nonEmpty("format", p.Format),
		nonEmpty("content_encoding", p.ContentEncoding),
	); err != nil {
		return err
	}
	if !slices.Contains(ContentEncodings, p.ContentEncoding) {
		return invalid("content_encoding", "unknown value %q; allowed: %s", p.ContentEncoding, strings.Join(ContentEncodings, ", "))
	}
	switch {
	case p.Body != nil && p.BodyRef != nil:
		return invalid("body", "body and body_ref are mutually exclusive; send exactly one")
	case p.Body == nil && p.BodyRef == nil:
		return invalid("body", "exactly one of body or body_ref must be present")
	}
	if err := firstErr(
		nonEmptyPtr("body_ref", p.BodyRef),
		nonEmptyPtr("idempotency_key", p.IdempotencyKey),
		nonEmptyPtr("redaction", p.Redaction),
		digestOK("content_digest", p.ContentDigest),
	); err != nil {
		return err
	}
	if p.ExpiresAtEpochS != nil && *p.ExpiresAtEpochS < 0 {
		return invalid("expires_at_epoch_s", "must not be negative")
	}
	if len(p.AcceptablePlacements) == 0 {
		return invalid("acceptable_placements", "must list at least one placement")
	}
	for i, ap := range p.AcceptablePlacements {
		if err := ap.Validate(); err != nil {
			return within(indexed("acceptable_placements", i), err)
		}
	}
	return nil
}

// Validate checks identifiers, enums and the digest form.
func (r PayloadReceipt) Validate() error {
	return firstErr(
		nonEmpty("payload_id", r.PayloadID),
		nonEmpty("payload_kind", r.PayloadKind),
		enumOK("placement", r.Placement, PlacementClasses),
		enumOK("status", r.Status, PlacementOutcomes),
		digestOK("content_digest", r.ContentDigest),
	)
}

// Validate checks that the degradation names a capability and a real
// support transition.
func (d CapabilityDegradation) Validate() error {
	if err := firstErr(
		nonEmpty("capability", d.Capability),
		enumOK("previous_support", d.PreviousSupport, SupportStates),
		enumOK("current_support", d.CurrentSupport, SupportStates),
		nonEmptyPtr("evidence", d.Evidence),
	); err != nil {
		return err
	}
	if d.PreviousSupport == d.CurrentSupport {
		return invalid("current_support", "must differ from previous_support (%s): a degradation is a support transition", d.PreviousSupport)
	}
	if d.ObservedAtEpochS != nil && *d.ObservedAtEpochS < 0 {
		return invalid("observed_at_epoch_s", "must not be negative")
	}
	if d.RetryClass != nil {
		return enumOK("retry_class", *d.RetryClass, RetryClasses)
	}
	return nil
}

// Validate checks that the warning has a code.
func (w Warning) Validate() error {
	return firstErr(nonEmpty("code", w.Code), nonEmptyPtr("capability", w.Capability))
}

// failureRules is shared by receipts and responses: status failed needs a
// failure_class and a retry_class; failure_class appears only on failures.
func failureRules(status ReceiptStatus, fc *FailureClass, rc *RetryClass) error {
	if fc != nil {
		if err := enumOK("failure_class", *fc, FailureClasses); err != nil {
			return err
		}
	}
	if rc != nil {
		if err := enumOK("retry_class", *rc, RetryClasses); err != nil {
			return err
		}
	}
	switch {
	case status == StatusFailed && fc == nil:
		return invalid("failure_class", "status failed requires failure_class")
	case status != StatusFailed && fc != nil:
		return invalid("failure_class", "failure_class is only valid with status failed (status is %s)", status)
	case status == StatusFailed && rc == nil:
		return invalid("retry_class", "status failed requires retry_class (default for %s: %s)", *fc, fc.DefaultRetry())
	}
	return nil
}

// Validate checks every receipt rule of the contract: schema version,
// non-empty identifiers, known enums, receipt.emitted never itself gets a
// receipt, capability.degraded names at least one degradation, status
// failed if and only if failure_class, and failed receipts carry a
// retry_class.
func (r LifecycleReceipt) Validate() error {
	if err := r.SchemaVersion.check("schema_version"); err != nil {
		return err
	}
	if err := firstErr(
		nonEmpty("receipt_id", r.ReceiptID),
		nonEmpty("client_id", r.ClientID),
		nonEmpty("adapter_id", r.AdapterID),
		nonEmpty("invocation_id", r.InvocationID),
		nonEmpty("event_id", r.EventID),
		nonEmptyPtr("idempotency_key", r.IdempotencyKey),
		nonEmptyPtr("parent_receipt_id", r.ParentReceiptID),
		nonEmptyPtr("harness_session_id", r.HarnessSessionID),
		nonEmptyPtr("harness_run_id", r.HarnessRunID),
		nonEmptyPtr("harness_task_id", r.HarnessTaskID),
		enumOK("event", r.Event, Events),
		enumOK("integration_mode", r.IntegrationMode, IntegrationModes),
		enumOK("status", r.Status, ReceiptStatuses),
	); err != nil {
		return err
	}
	if r.ParentReceiptID != nil && *r.ParentReceiptID == r.ReceiptID {
		return invalid("parent_receipt_id", "a receipt cannot be its own parent")
	}
	if r.AtEpochS < 0 {
		return invalid("at_epoch_s", "must not be negative")
	}
	if r.Event == EventReceiptEmitted {
		return invalid("event", "receipt.emitted is a notification event and must not itself produce a receipt")
	}
	if r.Event == EventCapabilityDegraded && len(r.CapabilityDegradations) == 0 {
		return invalid("capability_degradations", "a capability.degraded receipt must name the degraded capability and its support transition")
	}
	for i, pr := range r.PayloadReceipts {
		if err := pr.Validate(); err != nil {
			return within(indexed("payload_receipts", i), err)
		}
	}
	for i, d := range r.CapabilityDegradations {
		if err := d.Validate(); err != nil {
			return within(indexed("capability_degradations", i), err)
		}
	}
	for i, w := range r.Warnings {
		if err := w.Validate(); err != nil {
			return within(indexed("warnings", i), err)
		}
	}
	return failureRules(r.Status, r.FailureClass, r.RetryClass)
}

// Validate checks the request rules: schema version, non-empty
// identifiers, known enums, frame.* events carry a valid frame_context,
// and receipt.emitted carries no idempotency_key.
func (r CallbackRequest) Validate() error {
	if err := firstErr(
		schemaVersionOK("schema_version", r.SchemaVersion),
		enumOK("event", r.Event, Events),
		nonEmpty("event_id", r.EventID),
		nonEmpty("adapter_id", r.AdapterID),
		nonEmpty("adapter_version", r.AdapterVersion),
		enumOK("integration_mode", r.IntegrationMode, IntegrationModes),
		nonEmpty("invocation_id", r.InvocationID),
		nonEmptyPtr("harness_session_id", r.HarnessSessionID),
		nonEmptyPtr("harness_run_id", r.HarnessRunID),
		nonEmptyPtr("harness_task_id", r.HarnessTaskID),
		nonEmptyPtr("capability_snapshot_ref", r.CapabilitySnapshotRef),
		nonEmptyPtr("idempotency_key", r.IdempotencyKey),
	); err != nil {
		return err
	}
	if r.FrameContext != nil {
		if err := r.FrameContext.Validate(); err != nil {
			return within("frame_context", err)
		}
	}
	for i, ref := range r.PayloadRefs {
		if err := ref.Validate(); err != nil {
			return within(indexed("payload_refs", i), err)
		}
	}
	if r.Event.IsFrame() && r.FrameContext == nil {
		return invalid("frame_context", "frame.* events require frame_context")
	}
	if r.Event == EventReceiptEmitted && r.IdempotencyKey != nil {
		return invalid("idempotency_key", "receipt.emitted is a notification event and must not carry an idempotency_key")
	}
	return nil
}

// Validate checks the response rules: schema version, every client
// payload, non-empty receipt refs, warnings, and the failure rules shared
// with receipts.
func (r CallbackResponse) Validate() error {
	if err := firstErr(
		schemaVersionOK("schema_version", r.SchemaVersion),
		enumOK("status", r.Status, ReceiptStatuses),
	); err != nil {
		return err
	}
	for i, p := range r.ClientPayloads {
		if err := p.Validate(); err != nil {
			return within(indexed("client_payloads", i), err)
		}
	}
	for i, ref := range r.ReceiptRefs {
		if err := nonEmpty(indexed("receipt_refs", i), ref); err != nil {
			return err
		}
	}
	for i, w := range r.Warnings {
		if err := w.Validate(); err != nil {
			return within(indexed("warnings", i), err)
		}
	}
	return failureRules(r.Status, r.FailureClass, r.RetryClass)
}

// Validate checks the schema version, the request and every payload.
func (d DispatchEnvelope) Validate() error {
	if err := schemaVersionOK("schema_version", d.SchemaVersion); err != nil {
		return err
	}
	if err := d.Request.Validate(); err != nil {
		return within("request", err)
	}
	for i, p := range d.Payloads {
		if err := p.Validate(); err != nil {
			return within(indexed("payloads", i), err)
		}
	}
	return nil
}
