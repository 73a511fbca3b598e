package contract

// DerivedReceipt is the receipt that a producer records about receipt r
// rather than about the harness: a client's asynchronous failure, a
// sequence gap r revealed, a ledger outage that ended before r. It
// carries r's identity — schema version, client, adapter, invocation,
// integration mode and the harness session, run and task — and nothing
// else of r; the caller fills in the event, its ids, status and time and
// what the receipt says.
//
// Every producer derives through this one function, so a derived receipt
// never loses part of r's identity (the ledger's capability.degraded
// receipt once dropped the harness run and task ids).
func DerivedReceipt(r LifecycleReceipt) LifecycleReceipt {
	return LifecycleReceipt{
		SchemaVersion:    ReceiptSchemaVersion,
		ClientID:         r.ClientID,
		AdapterID:        r.AdapterID,
		InvocationID:     r.InvocationID,
		IntegrationMode:  r.IntegrationMode,
		HarnessSessionID: r.HarnessSessionID,
		HarnessRunID:     r.HarnessRunID,
		HarnessTaskID:    r.HarnessTaskID,
	}
}
