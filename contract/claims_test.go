package contract

import (
	"strings"
	"testing"
)

func TestReceiptCheckAgainstManifest(t *testing.T) {
	m := testManifest(t)
	base, err := DecodeReceipt(readExample(t, "lifecycle_receipt_root_minimal.json"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(r *LifecycleReceipt, m *AdapterManifest)
		want string
	}{
		{"claimed event in its mode", func(r *LifecycleReceipt, m *AdapterManifest) {}, ""},
		{"other adapter", func(r *LifecycleReceipt, m *AdapterManifest) { r.AdapterID = "claude" }, "adapter_id: receipt is for adapter \"claude\""},
		{"undeclared mode", func(r *LifecycleReceipt, m *AdapterManifest) { r.IntegrationMode = ModeTelemetryOnly }, "integration_mode: adapter \"codex\" does not declare"},
		{"event claimed through another mode", func(r *LifecycleReceipt, m *AdapterManifest) { r.Event = EventFrameOpening }, "does not claim frame.opening in mode launcher_wrapper"},
		{"failed receipt for an unclaimed event", func(r *LifecycleReceipt, m *AdapterManifest) {
			r.Event, r.Status, r.FailureClass, r.RetryClass = EventFrameOpening, StatusFailed, Ptr(FailureCapabilityUnsupported), Ptr(RetryDoNot)
		}, ""},
		{"gap detected with a ledger", func(r *LifecycleReceipt, m *AdapterManifest) {
			r.Event = EventReceiptGapDetected
			m.LifecycleEvents[EventReceiptGapDetected] = EventSupport{Support: SupportNative, Modes: []IntegrationMode{ModeLauncherWrapper}}
		}, ""},
		{"gap detected without a ledger", func(r *LifecycleReceipt, m *AdapterManifest) {
			r.Event = EventReceiptGapDetected
			m.Receipts.ReceiptLedger = SupportUnavailable
		}, "receipt.gap_detected needs a receipt ledger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, mm := base, m
			mm.LifecycleEvents = map[Event]EventSupport{}
			for k, v := range m.LifecycleEvents {
				mm.LifecycleEvents[k] = v
			}
			tt.edit(&r, &mm)
			if err := r.Validate(); err != nil {
				t.Fatalf("test receipt invalid: %v", err)
			}
			err := r.CheckAgainst(mm)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
