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

// checkUnicode refuses a document whose JSON strings are not Unicode
// text: bytes that are not UTF-8, or an escaped surrogate (\uD800 to
// \uDFFF) that is not half of a pair. JSON decoders replace either with
// U+FFFD, which would change a payload body silently (and then fail its
// byte_size and content_digest for a reason the sender cannot see). A
// body that is bytes goes as content_encoding base64. The error names
// the key whose value holds the first such string and its byte offset.
func checkUnicode(data []byte) error {
	if utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)) {
		return nil // the common case: nothing a decoder would replace
	}
	var key, last string // the last object key seen; the last string read
	for i := 0; i < len(data); {
		c := data[i]
		switch {
		case c == '"':
			s, end, bad := scanString(data, i)
			if bad >= 0 {
				field := key
				if field == "" {
					field = "document"
				}
				return invalid(field, "is not valid UTF-8 text (byte %d of the document): a JSON string holds Unicode text; send a body of bytes with content_encoding base64", bad)
			}
			last, i = s, end
		case c == ':':
			key = last
			i++
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return invalid("document", "is not valid UTF-8 (byte %d)", i)
			}
			i += n
		default:
			i++
		}
	}
	return nil
}

// scanString reads the JSON string starting at data[start] (a quote) and
// returns its raw text, the offset after its closing quote, and the
// offset of the first byte that is not Unicode text (-1 for none).
func scanString(data []byte, start int) (raw string, end, bad int) {
	i := start + 1
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			return string(data[start+1 : i]), i + 1, -1
		case c == '\\' && i+1 < len(data) && data[i+1] == 'u':
			r, ok := hex4(data, i+2)
			switch {
			case !ok:
				i += 2 // a syntax error the decoder reports
			case r >= 0xD800 && r <= 0xDBFF:
				lo, ok := hex4(data, i+8)
				if !ok || i+7 >= len(data) || data[i+6] != '\\' || data[i+7] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
					return "", 0, i
				}
				i += 12
			case r >= 0xDC00 && r <= 0xDFFF:
				return "", 0, i
			default:
				i += 6
			}
		case c == '\\':
			i += 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return "", 0, i
			}
			i += n
		default:
			i++
		}
	}
	return string(data[start+1:]), len(data), -1
}

// hex4 reads four hex digits at data[at].
func hex4(data []byte, at int) (rune, bool) {
	if at+4 > len(data) {
		return 0, false
	}
	var r rune
	for _, c := range data[at : at+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
