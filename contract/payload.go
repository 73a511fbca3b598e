package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"
	"unicode/utf8"
)

// DecodedBody returns the payload body as bytes, decoded per
// content_encoding. It fails for a body_ref payload, whose body Lifeloop
// never dereferences.
func (p PayloadEnvelope) DecodedBody() ([]byte, error) {
	if p.Body == nil {
		return nil, invalid("body", "payload carries body_ref, not an inline body")
	}
	switch p.ContentEncoding {
	case EncodingUTF8:
		if !utf8.ValidString(*p.Body) {
			return nil, invalid("body", "content_encoding utf8 but the body is not valid UTF-8")
		}
		return []byte(*p.Body), nil
	case EncodingBase64:
		b, err := base64.StdEncoding.Strict().DecodeString(*p.Body)
		if err != nil {
			return nil, invalid("body", "content_encoding base64 but the body does not decode: %v", err)
		}
		return b, nil
	default:
		return nil, invalid("content_encoding", "unknown value %q", p.ContentEncoding)
	}
}

// Digest returns the contract digest form "sha256:<hex>" of b.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Check runs Validate and then the content checks: the body decodes per
// content_encoding, byte_size equals the decoded length, content_digest
// (when present) matches the decoded bytes, and the payload has not
// expired (it is expired from the second expires_at_epoch_s onwards).
// For a body_ref payload only the expiry can be checked: the reference is
// never dereferenced.
func (p PayloadEnvelope) Check(now time.Time) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if p.ExpiresAtEpochS != nil && now.Unix() >= *p.ExpiresAtEpochS {
		return invalid("expires_at_epoch_s", "payload expired at %d (now %d); send a fresh payload", *p.ExpiresAtEpochS, now.Unix())
	}
	if p.Body == nil {
		return nil
	}
	body, err := p.DecodedBody()
	if err != nil {
		return err
	}
	if uint64(len(body)) != p.ByteSize {
		return invalid("byte_size", "declares %d bytes but the decoded body has %d", p.ByteSize, len(body))
	}
	if p.ContentDigest != nil {
		if got := Digest(body); got != *p.ContentDigest {
			return invalid("content_digest", "does not match the body (body digest is %s)", got)
		}
	}
	return nil
}

// TransportPayload is one entry of the transport envelope.
type TransportPayload struct {
	PayloadID   string  `json:"payload_id"`
	PayloadKind string  `json:"payload_kind"`
	Body        *string `json:"body,omitempty"`
	BodyRef     *string `json:"body_ref,omitempty"`
}

// TransportEnvelope is the {"payloads": [...]} document rendered into a
// harness's single additionalContext slot. "payloads" is its only
// reserved key.
type TransportEnvelope struct {
	Payloads []TransportPayload `json:"payloads"`
}

// RenderTransport renders payloads, in input order, as the transport
// envelope. Each body is carried as a verbatim JSON string (never parsed,
// so a body that looks like JSON stays a string) and each body_ref is
// carried as is (never dereferenced). Payloads must already be valid; an
// invalid one is an error naming its index. An empty input renders
// {"payloads":[]}.
func RenderTransport(payloads []PayloadEnvelope) ([]byte, error) {
	env := TransportEnvelope{Payloads: make([]TransportPayload, 0, len(payloads))}
	for i, p := range payloads {
		if err := p.Validate(); err != nil {
			return nil, within(indexed("payloads", i), err)
		}
		env.Payloads = append(env.Payloads, TransportPayload{
			PayloadID: p.PayloadID, PayloadKind: p.PayloadKind, Body: p.Body, BodyRef: p.BodyRef,
		})
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
