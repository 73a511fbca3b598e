package contract

import "testing"

func TestDerivedReceiptCarriesIdentityOnly(t *testing.T) {
	sid, run, task, key, parent := "s1", "r1", "t1", "k1", "rcp_parent"
	r := LifecycleReceipt{
		SchemaVersion: "old", ReceiptID: "rcp_1", IdempotencyKey: &key, ClientID: "c", AdapterID: "a",
		InvocationID: "inv_1", Event: EventFrameOpened, EventID: "e1", ParentReceiptID: &parent,
		IntegrationMode: ModeNativeHook, Status: StatusObserved, AtEpochS: 7,
		HarnessSessionID: &sid, HarnessRunID: &run, HarnessTaskID: &task,
		TelemetrySummary: map[string]any{"x": 1}, Warnings: []Warning{{Code: "w"}},
	}
	d := DerivedReceipt(r)
	want := LifecycleReceipt{
		SchemaVersion: ReceiptSchemaVersion, ClientID: "c", AdapterID: "a", InvocationID: "inv_1",
		IntegrationMode: ModeNativeHook, HarnessSessionID: &sid, HarnessRunID: &run, HarnessTaskID: &task,
	}
	if d.SchemaVersion != want.SchemaVersion || d.ClientID != want.ClientID || d.AdapterID != want.AdapterID ||
		d.InvocationID != want.InvocationID || d.IntegrationMode != want.IntegrationMode ||
		d.HarnessSessionID != &sid || d.HarnessRunID != &run || d.HarnessTaskID != &task {
		t.Fatalf("identity not carried: %+v", d)
	}
	if d.ReceiptID != "" || d.IdempotencyKey != nil || d.Event != "" || d.EventID != "" || d.ParentReceiptID != nil ||
		d.Status != "" || d.AtEpochS != 0 || d.TelemetrySummary != nil || d.Warnings != nil {
		t.Fatalf("more than identity carried: %+v", d)
	}
}
