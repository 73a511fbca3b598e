package contract

import "slices"

// CheckAgainst checks that receipt r claims nothing manifest m does not
// advertise: the adapter ids match, the integration mode is one of the
// manifest's, a receipt.gap_detected receipt comes from an adapter with a
// receipt ledger (gaps are only observable with one), and an event
// delivered by the adapter (status other than failed) is claimed for that
// mode. Call it after r.Validate and m.Validate.
func (r LifecycleReceipt) CheckAgainst(m AdapterManifest) error {
	if r.AdapterID != m.AdapterID {
		return invalid("adapter_id", "receipt is for adapter %q but the manifest is %q", r.AdapterID, m.AdapterID)
	}
	if !slices.Contains(m.IntegrationModes, r.IntegrationMode) {
		return invalid("integration_mode", "adapter %q does not declare integration mode %q (it declares %s)", m.AdapterID, r.IntegrationMode, joinModes(m.IntegrationModes))
	}
	if r.Event == EventReceiptGapDetected {
		switch m.Receipts.ReceiptLedger {
		case SupportNative, SupportSynthesized, SupportPartial:
		default:
			return invalid("event", "receipt.gap_detected needs a receipt ledger, and adapter %q declares receipt_ledger %s", m.AdapterID, m.Receipts.ReceiptLedger)
		}
	}
	if r.Status != StatusFailed {
		es, ok := m.LifecycleEvents[r.Event]
		if !ok || es.Support == SupportUnavailable || !slices.Contains(es.Modes, r.IntegrationMode) {
			return invalid("event", "adapter %q does not claim %s in mode %s; a receipt for it can only be failed", m.AdapterID, r.Event, r.IntegrationMode)
		}
	}
	return nil
}
