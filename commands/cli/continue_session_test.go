package cli

import (
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestContinuationGoesOnFromARecordedStop: a renewal whose stop the
// ledger holds (recorded by the seal, or by the lost wrapper before it
// wrote renewal.json) but whose status still says stopping is moved on to
// relaunching, so the continuation does not record the stop again; any
// other status is left as it is.
func TestContinuationGoesOnFromARecordedStop(t *testing.T) {
	step := func(ev contract.Event, name string) contract.LifecycleReceipt {
		return contract.LifecycleReceipt{ReceiptID: "lfr_" + name, Event: ev, TelemetrySummary: map[string]any{
			contract.SummaryReason: contract.StoppedByRenewal, "renewal_attempt": float64(2), contract.SummaryRenewalStep: name}}
	}
	started := contract.LifecycleReceipt{ReceiptID: "lfr_started", Event: contract.EventSessionStarted}
	stopped := []contract.LifecycleReceipt{started, step(contract.EventSessionEnding, "ending"), step(contract.EventSessionEnded, "ended")}
	for _, c := range []struct {
		name    string
		prior   []contract.LifecycleReceipt
		status  renewal.Status
		want    renewal.State
		endedID string
	}{
		{"stop recorded, status stopping", stopped, renewal.Status{State: renewal.StateStopping, Attempt: 2, EndingReceiptID: "lfr_ending"}, renewal.StateRelaunching, "lfr_ended"},
		{"stop recorded, another attempt", stopped, renewal.Status{State: renewal.StateStopping, Attempt: 3}, renewal.StateStopping, ""},
		{"stop not recorded", stopped[:2], renewal.Status{State: renewal.StateStopping, Attempt: 2}, renewal.StateStopping, ""},
		{"status past the stop", stopped, renewal.Status{State: renewal.StateRelaunching, Attempt: 2, EndedReceiptID: "lfr_x"}, renewal.StateRelaunching, "lfr_x"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := renewal.WriteStatus(renewal.StatusPath(dir), c.status); err != nil {
				t.Fatal(err)
			}
			if err := advanceStoppedRenewal(dir, c.prior); err != nil {
				t.Fatal(err)
			}
			st, err := renewal.ReadStatus(renewal.StatusPath(dir))
			if err != nil {
				t.Fatal(err)
			}
			if st.State != c.want || st.EndedReceiptID != c.endedID {
				t.Errorf("status %s (ended receipt %q), want %s (%q)", st.State, st.EndedReceiptID, c.want, c.endedID)
			}
		})
	}
}
