package contract

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func textPayload(body string, placements ...AcceptablePlacement) PayloadEnvelope {
	return PayloadEnvelope{
		SchemaVersion: Version, PayloadID: "pay_1", ClientID: "c", PayloadKind: "k", Format: "text/plain",
		ContentEncoding: EncodingUTF8, Body: Ptr(body), ByteSize: uint64(len(body)),
		ContentDigest: Ptr(Digest([]byte(body))), AcceptablePlacements: placements,
	}
}

func TestPayloadCheck(t *testing.T) {
	ok := []AcceptablePlacement{{Placement: PlacementReceiptOnly, Requirement: RequirementOptional}}
	b64 := base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 255})
	tests := []struct {
		name string
		p    func() PayloadEnvelope
		want string // "" means valid
	}{
		{"utf8 valid", func() PayloadEnvelope { return textPayload("héllo", ok...) }, ""},
		{"base64 valid", func() PayloadEnvelope {
			p := textPayload("", ok...)
			p.ContentEncoding, p.Body, p.ByteSize, p.ContentDigest = EncodingBase64, Ptr(b64), 4, Ptr(Digest([]byte{0, 1, 2, 255}))
			return p
		}, ""},
		{"no digest is fine", func() PayloadEnvelope { p := textPayload("x", ok...); p.ContentDigest = nil; return p }, ""},
		{"size mismatch", func() PayloadEnvelope { p := textPayload("hello", ok...); p.ByteSize = 4; return p }, "byte_size: declares 4 bytes but the decoded body has 5"},
		{"size counts bytes not runes", func() PayloadEnvelope { p := textPayload("héllo", ok...); p.ByteSize = 5; return p }, "byte_size"},
		{"digest mismatch", func() PayloadEnvelope {
			p := textPayload("hello", ok...)
			p.ContentDigest = Ptr(Digest([]byte("hellO")))
			return p
		}, "content_digest: does not match"},
		{"digest malformed", func() PayloadEnvelope { p := textPayload("hello", ok...); p.ContentDigest = Ptr("md5:abc"); return p }, "content_digest: must be \"sha256:\""},
		{"digest uppercase", func() PayloadEnvelope {
			p := textPayload("hello", ok...)
			p.ContentDigest = Ptr(strings.ToUpper(*p.ContentDigest))
			return p
		}, "content_digest"},
		{"invalid utf8", func() PayloadEnvelope { p := textPayload("\xff\xfe", ok...); return p }, "not valid UTF-8"},
		{"bad base64", func() PayloadEnvelope {
			p := textPayload("not base64!", ok...)
			p.ContentEncoding, p.ContentDigest = EncodingBase64, nil
			return p
		}, "body does not decode"},
		{"unknown encoding", func() PayloadEnvelope { p := textPayload("x", ok...); p.ContentEncoding = "gzip"; return p }, "content_encoding: unknown value \"gzip\""},
		{"expired", func() PayloadEnvelope {
			p := textPayload("x", ok...)
			p.ExpiresAtEpochS = Ptr(fixedNow.Unix())
			return p
		}, "expires_at_epoch_s: payload expired"},
		{"not yet expired", func() PayloadEnvelope {
			p := textPayload("x", ok...)
			p.ExpiresAtEpochS = Ptr(fixedNow.Unix() + 1)
			return p
		}, ""},
		{"body_ref skips content checks", func() PayloadEnvelope {
			p := textPayload("x", ok...)
			p.Body, p.BodyRef, p.ByteSize = nil, Ptr("s3://bucket/key"), 999
			return p
		}, ""},
		{"body_ref still expires", func() PayloadEnvelope {
			p := textPayload("x", ok...)
			p.Body, p.BodyRef, p.ExpiresAtEpochS = nil, Ptr("s3://bucket/key"), Ptr(int64(10))
			return p
		}, "expired"},
		{"body and body_ref", func() PayloadEnvelope { p := textPayload("x", ok...); p.BodyRef = Ptr("r"); return p }, "mutually exclusive"},
		{"neither body nor ref", func() PayloadEnvelope { p := textPayload("x", ok...); p.Body = nil; return p }, "exactly one of body or body_ref"},
		{"no placements", func() PayloadEnvelope { return textPayload("x") }, "acceptable_placements: must list at least one"},
		{"empty idempotency key", func() PayloadEnvelope { p := textPayload("x", ok...); p.IdempotencyKey = Ptr(""); return p }, "idempotency_key: must not be an empty string"},
		{"schema version", func() PayloadEnvelope { p := textPayload("x", ok...); p.SchemaVersion = "lifeloop.v0.1"; return p }, `schema_version: must be "lifeloop.v0.2" (or the integer 1), got "lifeloop.v0.1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p().Check(fixedNow)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRenderTransport(t *testing.T) {
	var payloads []PayloadEnvelope
	if err := json.Unmarshal(readExample(t, "transport_payloads.json"), &payloads); err != nil {
		t.Fatal(err)
	}
	got, err := RenderTransport(payloads)
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/examples/transport_envelope.golden.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	// Independent checks of the rules, not only the golden bytes.
	var env struct {
		Payloads []map[string]any `json:"payloads"`
	}
	if err := json.Unmarshal(got, &env); err != nil {
		t.Fatal(err)
	}
	if len(env.Payloads) != 3 {
		t.Fatalf("%d payloads", len(env.Payloads))
	}
	for i, want := range []string{"pay_01JD0000000000000000000001", "pay_01JD0000000000000000000002", "pay_01JD0000000000000000000003"} {
		if env.Payloads[i]["payload_id"] != want {
			t.Errorf("payload %d is %v, want %s (input order)", i, env.Payloads[i]["payload_id"], want)
		}
	}
	if _, isString := env.Payloads[2]["body"].(string); !isString || env.Payloads[2]["body"] != *payloads[2].Body {
		t.Errorf("JSON-looking body not carried verbatim as a string: %#v", env.Payloads[2]["body"])
	}
	if env.Payloads[1]["body_ref"] != "file:///var/lib/client/state/7.json" || env.Payloads[1]["body"] != nil {
		t.Errorf("body_ref entry = %#v", env.Payloads[1])
	}
	wantKeys := [][]string{{"body", "payload_id", "payload_kind"}, {"body_ref", "payload_id", "payload_kind"}, {"body", "payload_id", "payload_kind"}}
	for i, p := range env.Payloads {
		b, _ := json.Marshal(p)
		if k := keysOf(t, b); strings.Join(k, ",") != strings.Join(wantKeys[i], ",") {
			t.Errorf("payload %d keys %v, want %v", i, k, wantKeys[i])
		}
	}

	empty, err := RenderTransport(nil)
	if err != nil || string(empty) != `{"payloads":[]}` {
		t.Fatalf("empty render = %s, %v", empty, err)
	}
	bad := payloads[0]
	bad.BodyRef = Ptr("x")
	if _, err := RenderTransport([]PayloadEnvelope{payloads[1], bad}); err == nil || !strings.Contains(err.Error(), "payloads[1].body") {
		t.Fatalf("invalid payload accepted: %v", err)
	}
}

func TestPayloadExampleChecks(t *testing.T) {
	p, err := DecodePayloadEnvelope(readExample(t, "payload_envelope.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Check(fixedNow); err != nil {
		t.Fatal(err)
	}
	if err := p.Check(time.Unix(*p.ExpiresAtEpochS, 0)); err == nil {
		t.Fatal("expired payload accepted")
	}
}

// TestPayloadBodyNotUnicodeRefused: a body holding bytes that are not
// UTF-8, or a lone surrogate escape, is refused when the envelope is
// decoded, saying so, instead of being replaced with U+FFFD and then
// failing byte_size; a surrogate pair and plain text decode.
func TestPayloadBodyNotUnicodeRefused(t *testing.T) {
	doc := func(body string) []byte {
		return []byte(`{"schema_version":"lifeloop.v0.2","payload_id":"pay_1","client_id":"c","payload_kind":"k","format":"text/plain",` +
			`"content_encoding":"utf8","body":"` + body + `","byte_size":4,"acceptable_placements":[{"placement":"receipt_only","requirement":"optional"}]}`)
	}
	for _, c := range []struct {
		name, body string
		ok         bool
	}{
		{"text", "h\u00e9l", true},
		{"surrogate pair", `\ud83d\ude00`, true},
		{"raw byte", "ab\xffc", false},
		{"truncated rune", "abc\xc3", false},
		{"lone high surrogate", `\ud800ab`, false},
		{"lone low surrogate", `\udc00ab`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := DecodePayloadEnvelope(doc(c.body))
			if c.ok {
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if err := p.Check(time.Now()); err != nil {
					t.Fatalf("check: %v", err)
				}
				return
			}
			if err == nil {
				err = p.Check(time.Now())
			}
			if err == nil || !strings.Contains(err.Error(), "body: is not valid UTF-8") || !strings.Contains(err.Error(), "base64") {
				t.Fatalf("got %v, want the body refused as not UTF-8", err)
			}
		})
	}
}
