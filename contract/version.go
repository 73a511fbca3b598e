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

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// Version is the contract wire version. It is the schema_version of
// CallbackRequest, CallbackResponse and DispatchEnvelope, and the
// contract_version of an AdapterManifest.
const Version = "lifeloop.v0.2"

// ReceiptSchemaVersion is the schema_version lifeloop writes on a
// LifecycleReceipt: the contract version, as on every other envelope.
const ReceiptSchemaVersion = Version

// PayloadSchemaVersion is the schema_version lifeloop writes on a
// PayloadEnvelope: the contract version, as on every other envelope.
const PayloadSchemaVersion = Version

// LegacySchemaVersion is the integer schema_version of the contract text's
// illustrative receipt and payload examples, which lifeloop wrote before
// it wrote the contract version. Receipts and payload envelopes that carry
// it are still accepted and read as Version.
const LegacySchemaVersion = 1

// SchemaVersion is the schema_version of a LifecycleReceipt or a
// PayloadEnvelope. It is always written as the contract version string
// ("lifeloop.v0.2"), as the reference implementation's types declare it.
// On input it accepts that string and the integer 1 (LegacySchemaVersion),
// which it reads as Version, so ledgers and payload files written in
// either form stay readable; any other value is refused by the decoders
// and by Validate, naming both accepted forms.
type SchemaVersion string

// schemaVersionMsg is the refusal of a schema_version that is neither form.
func schemaVersionMsg(got string) string {
	return fmt.Sprintf("must be %q (or the integer %d), got %s", Version, LegacySchemaVersion, got)
}

// UnmarshalJSON accepts a JSON string (checked by Validate) or the integer
// 1, read as Version. Any other JSON value is an error.
func (v *SchemaVersion) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*v = SchemaVersion(s)
		return nil
	}
	if string(b) == strconv.Itoa(LegacySchemaVersion) {
		*v = Version
		return nil
	}
	return errors.New("schema_version " + schemaVersionMsg(string(b)))
}

// schemaVersionFrom is the strict decoder's reading of a schema_version
// value from the generic tree (a string or a json.Number).
func schemaVersionFrom(raw any) (SchemaVersion, error) {
	switch x := raw.(type) {
	case string:
		return SchemaVersion(x), nil
	case json.Number:
		if string(x) == strconv.Itoa(LegacySchemaVersion) {
			return Version, nil
		}
		return "", errors.New(schemaVersionMsg(string(x)))
	default:
		return "", errors.New(schemaVersionMsg(typeName(raw)))
	}
}

// check refuses a schema_version other than Version.
func (v SchemaVersion) check(field string) error {
	if v != Version {
		return invalid(field, "%s", schemaVersionMsg(strconv.Quote(string(v))))
	}
	return nil
}

// Ptr returns a pointer to a copy of v. It keeps literals for the many
// optional and nullable wire fields short: contract.Ptr("idem_1").
func Ptr[T any](v T) *T { return &v }
