// Package refclient decodes lifeloop's documents the way a client written
// against the reference implementation's types (the Rust crate
// lifeloop-cli) would: its struct shapes, its field types (schema_version
// is a string, every integer is unsigned), serde's rules (unknown fields
// rejected at every level but the open metadata and telemetry_summary
// maps; a non-Option field must be present and not null; an Option field
// may be absent or null; the receipt's required-nullable keys must be
// present) and its validate() (schema_version equals the contract
// version). It shares no code with package contract, so a test that
// decodes what lifeloop writes with it catches a drift of either.
//
// Where the lifeloop contract text defines a field the reference 0.1
// types lack, the field is accepted here and listed in Extensions (and in
// docs/contract.md, "Known differences from the reference"). Tests use
// this package; lifeloop itself does not.
package refclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// ContractVersion is the schema_version every envelope must carry.
const ContractVersion = "lifeloop.v0.2"

// The reference's wire enums, copied from its source (not from package
// contract).
var enums = map[string][]string{
	"integration_mode": {"manual_skill", "launcher_wrapper", "native_hook", "reference_adapter", "telemetry_only"},
	"support_state":    {"native", "synthesized", "manual", "partial", "unavailable"},
	"adapter_role":     {"primary_worker", "worker", "supervisor", "observer"},
	"event": {"session.starting", "session.started", "frame.opening", "frame.opened",
		"context.pressure_observed", "context.compacted", "frame.ending", "frame.ended",
		"session.ending", "session.ended", "supervisor.tick", "capability.degraded",
		"receipt.emitted", "receipt.gap_detected"},
	"receipt_status": {"observed", "delivered", "skipped", "degraded", "failed"},
	"failure_class": {"adapter_unavailable", "capability_unsupported", "capability_degraded",
		"placement_unavailable", "payload_too_large", "payload_rejected", "identity_unavailable",
		"transport_error", "timeout", "operator_required", "state_conflict", "invalid_request", "internal_error"},
	"retry_class":              {"safe_retry", "retry_after_reread", "retry_after_reconfigure", "retry_after_operator", "do_not_retry"},
	"placement_class":          {"developer_equivalent_frame", "pre_prompt_frame", "side_channel_context", "receipt_only"},
	"placement_outcome":        {"delivered", "skipped", "degraded", "failed"},
	"requirement_level":        {"required", "preferred", "optional"},
	"frame_class":              {"top_level", "subcall"},
	"manifest_placement_class": {"pre_session", "pre_frame_leading", "pre_frame_trailing", "tool_result", "manual_operator"},
}

// Struct tags: `json:"k"` names the key; `ref:"opt"` marks an Option or
// serde(default) field (may be absent; an Option also null);
// `ref:"nullable"` a required-nullable key (present, may be null);
// `ref:"ext"` a field the contract defines and the reference 0.1 types
// lack (optional); `enum:"name"` the enum a string (or each string of a
// slice, or each map key) must belong to.

// FrameContext is the reference's FrameContext.
type FrameContext struct {
	FrameID       string  `json:"frame_id"`
	ParentFrameID *string `json:"parent_frame_id" ref:"opt"`
	FrameClass    string  `json:"frame_class" enum:"frame_class"`
}

// AcceptablePlacement is the reference's AcceptablePlacement.
type AcceptablePlacement struct {
	Placement   string `json:"placement" enum:"placement_class"`
	Requirement string `json:"requirement" enum:"requirement_level"`
}

// PayloadRef is the reference's PayloadRef.
type PayloadRef struct {
	PayloadID     string  `json:"payload_id"`
	PayloadKind   string  `json:"payload_kind"`
	ContentDigest *string `json:"content_digest" ref:"opt"`
	ByteSize      *uint64 `json:"byte_size" ref:"opt"`
}

// PayloadEnvelope is the reference's PayloadEnvelope.
type PayloadEnvelope struct {
	SchemaVersion        string                `json:"schema_version"`
	PayloadID            string                `json:"payload_id"`
	ClientID             string                `json:"client_id"`
	PayloadKind          string                `json:"payload_kind"`
	Format               string                `json:"format"`
	ContentEncoding      string                `json:"content_encoding"`
	Body                 *string               `json:"body" ref:"opt"`
	BodyRef              *string               `json:"body_ref" ref:"opt"`
	ByteSize             uint64                `json:"byte_size"`
	ContentDigest        *string               `json:"content_digest" ref:"opt"`
	AcceptablePlacements []AcceptablePlacement `json:"acceptable_placements"`
	IdempotencyKey       *string               `json:"idempotency_key" ref:"opt"`
	ExpiresAtEpochS      *uint64               `json:"expires_at_epoch_s" ref:"opt"`
	Redaction            *string               `json:"redaction" ref:"opt"`
	Metadata             map[string]any        `json:"metadata" ref:"opt"`
}

// PayloadReceipt is the reference's PayloadReceipt.
type PayloadReceipt struct {
	PayloadID     string  `json:"payload_id"`
	PayloadKind   *string `json:"payload_kind" ref:"ext"`
	Placement     string  `json:"placement" enum:"placement_class"`
	Status        string  `json:"status" enum:"placement_outcome"`
	ByteSize      uint64  `json:"byte_size"`
	ContentDigest *string `json:"content_digest" ref:"ext"`
}

// CapabilityDegradation is the reference's CapabilityDegradation.
type CapabilityDegradation struct {
	Capability       string  `json:"capability"`
	PreviousSupport  string  `json:"previous_support" enum:"support_state"`
	CurrentSupport   string  `json:"current_support" enum:"support_state"`
	ObservedAtEpochS *uint64 `json:"observed_at_epoch_s" ref:"ext"`
	Evidence         *string `json:"evidence" ref:"opt"`
	RetryClass       *string `json:"retry_class" ref:"opt" enum:"retry_class"`
}

// Warning is the reference's Warning.
type Warning struct {
	Code       string  `json:"code"`
	Message    string  `json:"message"`
	Capability *string `json:"capability" ref:"opt"`
}

// LifecycleReceipt is the reference's LifecycleReceipt.
type LifecycleReceipt struct {
	SchemaVersion          string                  `json:"schema_version"`
	ReceiptID              string                  `json:"receipt_id"`
	IdempotencyKey         *string                 `json:"idempotency_key" ref:"nullable"`
	ClientID               string                  `json:"client_id"`
	AdapterID              string                  `json:"adapter_id"`
	InvocationID           string                  `json:"invocation_id"`
	Event                  string                  `json:"event" enum:"event"`
	EventID                string                  `json:"event_id"`
	Sequence               *uint64                 `json:"sequence" ref:"nullable"`
	ParentReceiptID        *string                 `json:"parent_receipt_id" ref:"nullable"`
	IntegrationMode        string                  `json:"integration_mode" enum:"integration_mode"`
	Status                 string                  `json:"status" enum:"receipt_status"`
	AtEpochS               uint64                  `json:"at_epoch_s"`
	HarnessSessionID       *string                 `json:"harness_session_id" ref:"opt"`
	HarnessRunID           *string                 `json:"harness_run_id" ref:"opt"`
	HarnessTaskID          *string                 `json:"harness_task_id" ref:"opt"`
	PayloadReceipts        []PayloadReceipt        `json:"payload_receipts" ref:"opt"`
	TelemetrySummary       map[string]any          `json:"telemetry_summary" ref:"opt"`
	CapabilityDegradations []CapabilityDegradation `json:"capability_degradations" ref:"opt"`
	FailureClass           *string                 `json:"failure_class" ref:"nullable" enum:"failure_class"`
	RetryClass             *string                 `json:"retry_class" ref:"nullable" enum:"retry_class"`
	Warnings               []Warning               `json:"warnings" ref:"opt"`
}

// CallbackRequest is the reference's CallbackRequest.
type CallbackRequest struct {
	SchemaVersion         string         `json:"schema_version"`
	Event                 string         `json:"event" enum:"event"`
	EventID               string         `json:"event_id"`
	AdapterID             string         `json:"adapter_id"`
	AdapterVersion        string         `json:"adapter_version"`
	IntegrationMode       string         `json:"integration_mode" enum:"integration_mode"`
	InvocationID          string         `json:"invocation_id"`
	HarnessSessionID      *string        `json:"harness_session_id" ref:"opt"`
	HarnessRunID          *string        `json:"harness_run_id" ref:"opt"`
	HarnessTaskID         *string        `json:"harness_task_id" ref:"opt"`
	FrameContext          *FrameContext  `json:"frame_context" ref:"opt"`
	CapabilitySnapshotRef *string        `json:"capability_snapshot_ref" ref:"opt"`
	PayloadRefs           []PayloadRef   `json:"payload_refs" ref:"opt"`
	Sequence              *uint64        `json:"sequence" ref:"opt"`
	IdempotencyKey        *string        `json:"idempotency_key" ref:"opt"`
	Metadata              map[string]any `json:"metadata" ref:"opt"`
}

// CallbackResponse is the reference's CallbackResponse.
type CallbackResponse struct {
	SchemaVersion  string            `json:"schema_version"`
	Status         string            `json:"status" enum:"receipt_status"`
	ClientPayloads []PayloadEnvelope `json:"client_payloads" ref:"opt"`
	ReceiptRefs    []string          `json:"receipt_refs" ref:"opt"`
	Warnings       []Warning         `json:"warnings" ref:"opt"`
	FailureClass   *string           `json:"failure_class" ref:"opt" enum:"failure_class"`
	RetryClass     *string           `json:"retry_class" ref:"opt" enum:"retry_class"`
	Metadata       map[string]any    `json:"metadata" ref:"opt"`
}

// DispatchEnvelope is the reference's DispatchEnvelope.
type DispatchEnvelope struct {
	SchemaVersion string            `json:"schema_version"`
	Request       CallbackRequest   `json:"request"`
	Payloads      []PayloadEnvelope `json:"payloads" ref:"opt"`
}

// ManifestEventSupport is the reference's ManifestLifecycleEventSupport.
type ManifestEventSupport struct {
	Support string   `json:"support" enum:"support_state"`
	Modes   []string `json:"modes" ref:"opt" enum:"integration_mode"`
}

// ManifestPlacementSupport is the reference's ManifestPlacementSupport.
type ManifestPlacementSupport struct {
	Support  string  `json:"support" enum:"support_state"`
	MaxBytes *uint64 `json:"max_bytes" ref:"opt"`
}

// ManifestSupport is the reference's ManifestContextPressure (and, without
// evidence, ManifestSessionRename and ManifestApprovalSurface).
type ManifestSupport struct {
	Support  string  `json:"support" enum:"support_state"`
	Evidence *string `json:"evidence" ref:"opt"`
}

// ManifestBareSupport is the reference's ManifestSessionRename and
// ManifestApprovalSurface.
type ManifestBareSupport struct {
	Support string `json:"support" enum:"support_state"`
}

// ManifestReceipts is the reference's ManifestReceipts.
type ManifestReceipts struct {
	Native              bool   `json:"native"`
	LifeloopSynthesized bool   `json:"lifeloop_synthesized"`
	ReceiptLedger       string `json:"receipt_ledger" enum:"support_state"`
}

// ManifestSessionIdentity is the reference's ManifestSessionIdentity.
type ManifestSessionIdentity struct {
	HarnessSessionID string `json:"harness_session_id" enum:"support_state"`
	HarnessRunID     string `json:"harness_run_id" enum:"support_state"`
	HarnessTaskID    string `json:"harness_task_id" enum:"support_state"`
}

// ManifestTelemetrySource is the reference's ManifestTelemetrySource.
type ManifestTelemetrySource struct {
	Source  string `json:"source"`
	Support string `json:"support" enum:"support_state"`
}

// ManifestKnownDegradation is the reference's ManifestKnownDegradation.
type ManifestKnownDegradation struct {
	Capability      string  `json:"capability"`
	PreviousSupport string  `json:"previous_support" enum:"support_state"`
	CurrentSupport  string  `json:"current_support" enum:"support_state"`
	Evidence        *string `json:"evidence" ref:"opt"`
}

// AdapterManifest is the reference's AdapterManifest. Renewal is a
// contract field the reference 0.1 types lack; its shape is not checked
// beyond being an object.
type AdapterManifest struct {
	ContractVersion   string                              `json:"contract_version"`
	AdapterID         string                              `json:"adapter_id"`
	AdapterVersion    string                              `json:"adapter_version"`
	DisplayName       string                              `json:"display_name"`
	Role              string                              `json:"role" enum:"adapter_role"`
	IntegrationModes  []string                            `json:"integration_modes" enum:"integration_mode"`
	LifecycleEvents   map[string]ManifestEventSupport     `json:"lifecycle_events" enum:"event"`
	Placement         map[string]ManifestPlacementSupport `json:"placement" enum:"manifest_placement_class"`
	ContextPressure   ManifestSupport                     `json:"context_pressure"`
	Receipts          ManifestReceipts                    `json:"receipts"`
	SessionIdentity   *ManifestSessionIdentity            `json:"session_identity" ref:"opt"`
	SessionRename     *ManifestBareSupport                `json:"session_rename" ref:"opt"`
	Renewal           map[string]any                      `json:"renewal" ref:"ext"`
	ApprovalSurface   *ManifestBareSupport                `json:"approval_surface" ref:"opt"`
	FailureModes      []string                            `json:"failure_modes" ref:"opt" enum:"failure_class"`
	TelemetrySources  []ManifestTelemetrySource           `json:"telemetry_sources" ref:"opt"`
	KnownDegradations []ManifestKnownDegradation          `json:"known_degradations" ref:"opt"`
}

// Extensions lists, as "Type.key", the contract fields the reference 0.1
// types lack that this decoder accepts.
func Extensions() []string {
	var out []string
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("ref") == "ext" {
				out = append(out, t.Name()+"."+f.Tag.Get("json"))
			}
			walk(f.Type)
		}
	}
	for _, v := range []any{LifecycleReceipt{}, DispatchEnvelope{}, CallbackResponse{}, AdapterManifest{}} {
		walk(reflect.TypeOf(v))
	}
	sort.Strings(out)
	return out
}

// Decode strictly decodes data into dst (a pointer to one of the types
// above) by the reference's rules, then runs the reference's schema
// version check. The error names the JSON path.
func Decode(data []byte, dst any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the document")
	}
	v := reflect.ValueOf(dst).Elem()
	if err := walk("", tree, v, ""); err != nil {
		return err
	}
	return checkVersions("", v)
}

// checkVersions is the reference's validate() schema check, applied to
// every envelope in the document.
func checkVersions(path string, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return checkVersions(path, v.Elem())
	case reflect.Slice:
		for i := range v.Len() {
			if err := checkVersions(fmt.Sprintf("%s[%d]", path, i), v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			name := t.Field(i).Tag.Get("json")
			fp := join(path, name)
			if name == "schema_version" || name == "contract_version" {
				if got := v.Field(i).String(); got != ContractVersion {
					return fmt.Errorf("%s: schema_version mismatch: expected `%s`, found `%s`", fp, ContractVersion, got)
				}
				continue
			}
			if err := checkVersions(fp, v.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func walk(path string, raw any, v reflect.Value, enum string) error {
	switch v.Kind() {
	case reflect.Pointer:
		if raw == nil {
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := walk(path, raw, p.Elem(), enum); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Interface:
		v.Set(reflect.ValueOf(&raw).Elem())
		return nil
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			return fmt.Errorf("%s: invalid type: %s, expected a string", path, describe(raw))
		}
		if enum != "" && !slices.Contains(enums[enum], s) {
			return fmt.Errorf("%s: unknown variant `%s`, expected one of %s", path, s, strings.Join(enums[enum], ", "))
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			return fmt.Errorf("%s: invalid type: %s, expected a boolean", path, describe(raw))
		}
		v.SetBool(b)
		return nil
	case reflect.Uint64:
		n, ok := raw.(json.Number)
		if !ok {
			return fmt.Errorf("%s: invalid type: %s, expected u64", path, describe(raw))
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil {
			return fmt.Errorf("%s: invalid value: %s, expected u64", path, n)
		}
		v.SetUint(u)
		return nil
	case reflect.Slice:
		arr, ok := raw.([]any)
		if !ok {
			return fmt.Errorf("%s: invalid type: %s, expected a sequence", path, describe(raw))
		}
		s := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, item := range arr {
			if err := walk(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i), enum); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: invalid type: %s, expected a map", path, describe(raw))
		}
		m := reflect.MakeMapWithSize(v.Type(), len(obj))
		for k, item := range obj {
			if enum != "" && !slices.Contains(enums[enum], k) {
				return fmt.Errorf("%s: unknown variant `%s`, expected one of %s", join(path, k), k, strings.Join(enums[enum], ", "))
			}
			ev := reflect.New(v.Type().Elem()).Elem()
			if err := walk(join(path, k), item, ev, ""); err != nil {
				return err
			}
			m.SetMapIndex(reflect.ValueOf(k), ev)
		}
		v.Set(m)
		return nil
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: invalid type: %s, expected struct %s", path, describe(raw), v.Type().Name())
		}
		return walkStruct(path, obj, v)
	default:
		return fmt.Errorf("%s: unsupported Go type %s", path, v.Type())
	}
}

func walkStruct(path string, obj map[string]any, v reflect.Value) error {
	t := v.Type()
	known := map[string]int{}
	var names []string
	for i := range t.NumField() {
		name := t.Field(i).Tag.Get("json")
		known[name] = i
		names = append(names, name)
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if _, ok := known[k]; !ok {
			return fmt.Errorf("%s: unknown field `%s`, expected one of %s", path, k, strings.Join(names, ", "))
		}
	}
	var missingNullable []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, mode := f.Tag.Get("json"), f.Tag.Get("ref")
		raw, present := obj[name]
		fp := join(path, name)
		switch {
		case !present && mode == "nullable":
			missingNullable = append(missingNullable, name)
			continue
		case !present && (mode == "opt" || mode == "ext"):
			continue
		case !present:
			return fmt.Errorf("%s: missing field `%s`", path, name)
		case raw == nil && f.Type.Kind() != reflect.Pointer:
			// serde(default) collections and maps refuse null like any
			// non-Option value.
			return fmt.Errorf("%s: invalid type: null, expected %s", fp, f.Type.Kind())
		}
		if err := walk(fp, raw, v.Field(i), f.Tag.Get("enum")); err != nil {
			return err
		}
	}
	if len(missingNullable) > 0 {
		return fmt.Errorf("%s: missing required-nullable field(s): %s", path, strings.Join(missingNullable, ", "))
	}
	return nil
}

func describe(raw any) string {
	switch x := raw.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", x)
	case json.Number:
		return "number " + string(x)
	case bool:
		return "boolean"
	case []any:
		return "sequence"
	case map[string]any:
		return "map"
	}
	return fmt.Sprintf("%T", raw)
}
