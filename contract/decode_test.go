package contract

import (
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func readExample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mutate decodes an example into a generic object, applies f and
// re-encodes it.
func mutate(t *testing.T, name string, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(readExample(t, name), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func keysOf(t *testing.T, b []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestReceiptEncodesRequiredNullableKeys(t *testing.T) {
	r := LifecycleReceipt{
		SchemaVersion: Version, ReceiptID: "lfr_1", ClientID: "c", AdapterID: "a", InvocationID: "inv_1",
		Event: EventSessionStarted, EventID: "evt_1", IntegrationMode: ModeLauncherWrapper,
		Status: StatusObserved, AtEpochS: 1,
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"adapter_id", "at_epoch_s", "client_id", "event", "event_id", "failure_class",
		"idempotency_key", "integration_mode", "invocation_id", "parent_receipt_id",
		"receipt_id", "retry_class", "schema_version", "sequence", "status",
	}
	if got := keysOf(t, b); !slices.Equal(got, want) {
		t.Fatalf("keys = %v\nwant %v", got, want)
	}
	for _, k := range []string{"idempotency_key", "sequence", "parent_receipt_id", "failure_class", "retry_class"} {
		if !strings.Contains(string(b), `"`+k+`":null`) {
			t.Errorf("%s not encoded as null: %s", k, b)
		}
	}
	if _, err := DecodeReceipt(b); err != nil {
		t.Fatalf("own encoding does not decode: %v", err)
	}
}

func TestReceiptMissingRequiredNullableIsOneError(t *testing.T) {
	tests := []struct {
		name    string
		drop    []string
		missing string
	}{
		{"one", []string{"sequence"}, "missing required key(s): sequence "},
		{"all five", []string{"idempotency_key", "sequence", "parent_receipt_id", "failure_class", "retry_class"},
			"missing required key(s): idempotency_key, sequence, parent_receipt_id, failure_class, retry_class "},
		{"mixed with required", []string{"receipt_id", "retry_class"}, "missing required key(s): receipt_id, retry_class "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mutate(t, "lifecycle_receipt_root_minimal.json", func(m map[string]any) {
				for _, k := range tt.drop {
					delete(m, k)
				}
			})
			_, err := DecodeReceipt(b)
			if err == nil || !strings.Contains(err.Error(), tt.missing) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.missing)
			}
		})
	}
}

func TestDecodeRejectsUnknownEnumValuesNamingField(t *testing.T) {
	tests := []struct {
		name    string
		decode  func([]byte) error
		example string
		f       func(m map[string]any)
		want    []string
	}{
		{"receipt event", func(b []byte) error { _, err := DecodeReceipt(b); return err }, "lifecycle_receipt.json",
			func(m map[string]any) { m["event"] = "frame.opend" },
			[]string{"event: unknown event \"frame.opend\"", "session.starting", "receipt.gap_detected"}},
		{"receipt nested placement", func(b []byte) error { _, err := DecodeReceipt(b); return err }, "lifecycle_receipt.json",
			func(m map[string]any) {
				m["payload_receipts"].([]any)[0].(map[string]any)["placement"] = "system_frame"
			},
			[]string{"payload_receipts[0].placement: unknown placement class \"system_frame\"", "receipt_only"}},
		{"response retry class", func(b []byte) error { _, err := DecodeCallbackResponse(b); return err }, "callback_response_failed.json",
			func(m map[string]any) { m["retry_class"] = "retry" },
			[]string{"retry_class: unknown retry class \"retry\"", "safe_retry", "do_not_retry"}},
		{"manifest event key", func(b []byte) error { _, err := DecodeManifest(b); return err }, "adapter_manifest.json",
			func(m map[string]any) {
				m["lifecycle_events"].(map[string]any)["frame.closing"] = map[string]any{"support": "native", "modes": []any{"native_hook"}}
			},
			[]string{"lifecycle_events.frame.closing: unknown event"}},
		{"manifest support", func(b []byte) error { _, err := DecodeManifest(b); return err }, "adapter_manifest.json",
			func(m map[string]any) {
				m["renewal"].(map[string]any)["reset"].(map[string]any)["manual"] = "simulated"
			},
			[]string{"renewal.reset.manual: unknown support state \"simulated\"", "allowed: native, synthesized, manual, partial, unavailable"}},
		{"dispatch frame class", func(b []byte) error { _, err := DecodeDispatchEnvelope(b); return err }, "dispatch_envelope.json",
			func(m map[string]any) {
				m["request"].(map[string]any)["frame_context"].(map[string]any)["frame_class"] = "nested"
			},
			[]string{"request.frame_context.frame_class: unknown frame class \"nested\"", "top_level, subcall"}},
		{"capability request level", func(b []byte) error { _, err := DecodeCapabilityRequest(b); return err }, "capability_request.json",
			func(m map[string]any) { m["context_pressure"].(map[string]any)["level"] = "must" },
			[]string{"context_pressure.level: unknown requirement level \"must\"", "required, preferred, optional"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.decode(mutate(t, tt.example, tt.f))
			if err == nil {
				t.Fatal("accepted")
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestDecodeRejectsUnknownFieldsAtAnyDepth(t *testing.T) {
	tests := []struct {
		name    string
		example string
		f       func(m map[string]any)
		field   string
	}{
		{"top level", "lifecycle_receipt.json", func(m map[string]any) { m["extra"] = 1 }, "extra"},
		{"payload receipt", "lifecycle_receipt.json",
			func(m map[string]any) { m["payload_receipts"].([]any)[0].(map[string]any)["body"] = "x" }, "payload_receipts[0].body"},
		{"dispatch payload", "dispatch_envelope.json",
			func(m map[string]any) { m["payloads"].([]any)[0].(map[string]any)["priority"] = 1 }, "payloads[0].priority"},
		{"manifest receipts", "adapter_manifest.json",
			func(m map[string]any) { m["receipts"].(map[string]any)["ledger"] = "native" }, "receipts.ledger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeKind(exampleKind(tt.example), mutate(t, tt.example, tt.f), fixedNow)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Msg, "unknown field") {
				t.Fatalf("err = %v, want unknown field at %s", err, tt.field)
			}
		})
	}
	t.Run("metadata keeps arbitrary keys", func(t *testing.T) {
		b := mutate(t, "payload_envelope.json", func(m map[string]any) {
			m["metadata"] = map[string]any{"anything": map[string]any{"nested": []any{1, "two", nil}}}
		})
		p, err := DecodePayloadEnvelope(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Metadata["anything"]; !ok {
			t.Fatalf("metadata lost: %#v", p.Metadata)
		}
	})
}

func TestDecodeRejectsMalformedDocuments(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"duplicate key", `{"client_id":"a","client_id":"b"}`, "client_id: duplicate key"},
		{"trailing data", `{"client_id":"a"} {}`, "after the top-level value"},
		{"not an object", `[]`, "must be an object"},
		{"truncated", `{"client_id":`, "invalid JSON"},
		{"wrong type", `{"client_id":7}`, "client_id: must be a string, got a number"},
		{"null required", `{"client_id":null}`, "client_id: must not be null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeCapabilityRequest([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	t.Run("negative byte size", func(t *testing.T) {
		b := mutate(t, "payload_envelope.json", func(m map[string]any) { m["byte_size"] = -1 })
		if _, err := DecodePayloadEnvelope(b); err == nil || !strings.Contains(err.Error(), "byte_size: must be a non-negative integer") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("fractional epoch", func(t *testing.T) {
		b := mutate(t, "lifecycle_receipt.json", func(m map[string]any) { m["at_epoch_s"] = 1.5 })
		if _, err := DecodeReceipt(b); err == nil || !strings.Contains(err.Error(), "at_epoch_s: must be an integer") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOptionalNullReadsAsAbsent(t *testing.T) {
	b := mutate(t, "lifecycle_receipt_root_minimal.json", func(m map[string]any) {
		m["harness_task_id"] = nil
		m["payload_receipts"] = []any{}
	})
	r, err := DecodeReceipt(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.HarnessTaskID != nil || r.PayloadReceipts != nil {
		t.Fatalf("got %#v", r)
	}
	out, _ := json.Marshal(r)
	if strings.Contains(string(out), "harness_task_id") || strings.Contains(string(out), "payload_receipts") {
		t.Fatalf("optional empty keys re-encoded: %s", out)
	}
}
