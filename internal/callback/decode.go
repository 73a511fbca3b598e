package callback

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lifeloop/lifeloop/contract"
)

// unmarshalResponse decodes one CallbackResponse strictly (unknown fields
// rejected) and checks the response rules the router depends on.
func unmarshalResponse(doc []byte, resp *contract.CallbackResponse) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(resp); err != nil {
		return err
	}
	return validateResponse(resp)
}

func validateResponse(r *contract.CallbackResponse) error {
	if r.SchemaVersion != contract.Version {
		return fmt.Errorf("schema_version %q, want %q", r.SchemaVersion, contract.Version)
	}
	if !r.Status.Valid() {
		return errors.New("status is missing or unknown")
	}
	failed := r.Status == contract.StatusFailed
	switch {
	case failed && r.FailureClass == nil:
		return errors.New("status=failed requires failure_class")
	case !failed && r.FailureClass != nil:
		return errors.New("failure_class is only valid on status=failed responses")
	case failed && r.RetryClass == nil:
		return errors.New("status=failed requires retry_class")
	}
	for i, w := range r.Warnings {
		if w.Code == "" {
			return fmt.Errorf("warnings[%d].code is empty", i)
		}
	}
	for i, ref := range r.ReceiptRefs {
		if ref == "" {
			return fmt.Errorf("receipt_refs[%d] is empty", i)
		}
	}
	for i, p := range r.ClientPayloads {
		if err := validatePayload(p); err != nil {
			return fmt.Errorf("client_payloads[%d]: %w", i, err)
		}
	}
	return nil
}

func validatePayload(p contract.PayloadEnvelope) error {
	switch {
	case p.PayloadID == "":
		return errors.New("payload_id is empty")
	case p.ClientID == "":
		return errors.New("client_id is empty")
	case p.PayloadKind == "":
		return errors.New("payload_kind is empty")
	case (p.Body == nil) == (p.BodyRef == nil):
		return errors.New("exactly one of body or body_ref must be present")
	case len(p.AcceptablePlacements) == 0:
		return errors.New("acceptable_placements must list at least one placement")
	}
	return nil
}
