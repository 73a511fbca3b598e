// Package contract is the Lifeloop Lifecycle Contract (wire version
// lifeloop.v0.2) as Go types: the event vocabulary and other wire enums,
// the callback, dispatch, payload and receipt envelopes, the adapter
// manifest, strict JSON decoding, validation, capability negotiation,
// payload placement resolution and the failure-to-retry mapping.
//
// The package is pure: it performs no I/O, reads no clock (functions that
// care about expiry take a now argument) and holds no state beyond the
// constant lists of enum values. Identifiers are minted by callers.
package contract

// Version is the contract wire version. It is the schema_version of
// CallbackRequest, CallbackResponse and DispatchEnvelope, and the
// contract_version of an AdapterManifest.
const Version = "lifeloop.v0.2"

// ReceiptSchemaVersion is the integer schema_version of a LifecycleReceipt.
const ReceiptSchemaVersion = 1

// PayloadSchemaVersion is the integer schema_version of a PayloadEnvelope.
const PayloadSchemaVersion = 1

// Ptr returns a pointer to a copy of v. It keeps literals for the many
// optional and nullable wire fields short: contract.Ptr("idem_1").
func Ptr[T any](v T) *T { return &v }
