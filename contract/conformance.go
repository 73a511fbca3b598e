package contract

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Conformance case kinds, as used in the "kind" key of a case file.
const (
	KindCallbackRequest   = "callback_request"
	KindCallbackResponse  = "callback_response"
	KindDispatchEnvelope  = "dispatch_envelope"
	KindPayloadEnvelope   = "payload_envelope"
	KindLifecycleReceipt  = "lifecycle_receipt"
	KindAdapterManifest   = "adapter_manifest"
	KindCapabilityRequest = "capability_request"
)

// ConformanceKinds lists every conformance case kind.
var ConformanceKinds = []string{
	KindCallbackRequest, KindCallbackResponse, KindDispatchEnvelope, KindPayloadEnvelope,
	KindLifecycleReceipt, KindAdapterManifest, KindCapabilityRequest,
}

// ConformanceCase is one conformance corpus file:
//
//	{"kind": "lifecycle_receipt", "expect": "invalid",
//	 "expect_error": "failure_class", "description": "...",
//	 "schema_expect": "valid", "now_epoch_s": 1778100000, "data": {...}}
//
// ExpectError, when set, must be a substring of the error. SchemaExpect
// records the JSON Schema verdict when it differs from Expect because the
// rule is beyond what a schema expresses (digests, byte sizes, expiry,
// cross-field rules). NowEpochS fixes the clock for payload expiry.
type ConformanceCase struct {
	Kind         string          `json:"kind"`
	Expect       string          `json:"expect"`
	ExpectError  string          `json:"expect_error,omitempty"`
	Description  string          `json:"description"`
	SchemaExpect string          `json:"schema_expect,omitempty"`
	NowEpochS    *int64          `json:"now_epoch_s,omitempty"`
	Data         json.RawMessage `json:"data"`
}

var caseKeys = []string{"kind", "expect", "expect_error", "description", "schema_expect", "now_epoch_s", "data"}

// ParseConformanceCase strictly reads a case file.
func ParseConformanceCase(data []byte) (ConformanceCase, error) {
	var c ConformanceCase
	// "data" is kept as the original bytes, so the envelope decoder sees
	// exactly what the file holds (duplicate keys included).
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(data, &keys); err != nil {
		return c, fmt.Errorf("conformance case: %w", err)
	}
	for k := range keys {
		if !slices.Contains(caseKeys, k) {
			return c, fmt.Errorf("conformance case: unknown key %q; allowed: %s", k, strings.Join(caseKeys, ", "))
		}
	}
	if _, ok := keys["data"]; !ok {
		return c, fmt.Errorf("conformance case: missing key \"data\"")
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("conformance case: %w", err)
	}
	if !slices.Contains(ConformanceKinds, c.Kind) {
		return c, fmt.Errorf("conformance case: unknown kind %q; allowed: %s", c.Kind, strings.Join(ConformanceKinds, ", "))
	}
	if c.Expect != "valid" && c.Expect != "invalid" {
		return c, fmt.Errorf("conformance case: expect must be \"valid\" or \"invalid\", got %q", c.Expect)
	}
	if c.SchemaExpect != "" && c.SchemaExpect != "valid" && c.SchemaExpect != "invalid" {
		return c, fmt.Errorf("conformance case: schema_expect must be \"valid\" or \"invalid\", got %q", c.SchemaExpect)
	}
	if c.Expect == "valid" && c.ExpectError != "" {
		return c, fmt.Errorf("conformance case: expect_error makes no sense with expect \"valid\"")
	}
	return c, nil
}

// DecodeKind decodes and validates data as the envelope kind. For
// payload_envelope it also runs PayloadEnvelope.Check at now.
func DecodeKind(kind string, data []byte, now time.Time) (any, error) {
	switch kind {
	case KindCallbackRequest:
		return DecodeCallbackRequest(data)
	case KindCallbackResponse:
		return DecodeCallbackResponse(data)
	case KindDispatchEnvelope:
		return DecodeDispatchEnvelope(data)
	case KindPayloadEnvelope:
		p, err := DecodePayloadEnvelope(data)
		if err != nil {
			return nil, err
		}
		if err := p.Check(now); err != nil {
			return nil, err
		}
		return p, nil
	case KindLifecycleReceipt:
		return DecodeReceipt(data)
	case KindAdapterManifest:
		return DecodeManifest(data)
	case KindCapabilityRequest:
		return DecodeCapabilityRequest(data)
	default:
		return nil, fmt.Errorf("unknown kind %q; allowed: %s", kind, strings.Join(ConformanceKinds, ", "))
	}
}

// CheckConformanceCase runs one case file. err reports a malformed case
// file. Otherwise ok says whether the implementation's verdict matches the
// case's expectation, and detail describes the verdict (the validation
// error, if any). now is used for payload expiry unless the case sets
// now_epoch_s.
func CheckConformanceCase(data []byte, now time.Time) (ok bool, detail string, err error) {
	c, err := ParseConformanceCase(data)
	if err != nil {
		return false, "", err
	}
	if c.NowEpochS != nil {
		now = time.Unix(*c.NowEpochS, 0)
	}
	_, verr := DecodeKind(c.Kind, c.Data, now)
	switch {
	case c.Expect == "valid" && verr == nil:
		return true, "valid as expected", nil
	case c.Expect == "valid":
		return false, "expected valid, got error: " + verr.Error(), nil
	case verr == nil:
		return false, "expected invalid, but it was accepted", nil
	case c.ExpectError != "" && !strings.Contains(verr.Error(), c.ExpectError):
		return false, fmt.Sprintf("expected an error containing %q, got: %s", c.ExpectError, verr.Error()), nil
	default:
		return true, "invalid as expected: " + verr.Error(), nil
	}
}
