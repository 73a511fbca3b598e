package telemetry

import (
	"encoding/json"
	"strings"
	"testing"
)

// scanValid reports whether JSONScan accepts b as one JSON text.
func scanValid(b []byte) bool {
	var s JSONScan
	s.Reset(b)
	s.Skip()
	return s.End()
}

func TestJSONScanValidity(t *testing.T) {
	for _, c := range []string{
		`{}`, `[]`, `""`, `0`, `-0`, `1.5e-3`, `true`, `null`, ` {"a" : [1, {"b":null}, "x\"\\\/\b\f\n\r\t\u00e9"] } `,
		`{"a":1,}`, `[1,]`, `{,}`, `[,1]`, `01`, `1.`, `.5`, `1e`, `-`, `"\x"`, `"\u12"`, "\"\x01\"", `{"a"}`, `{"a":}`, `{1:2}`,
		`nul`, `truex`, `[1 2]`, `{"a":1 "b":2}`, `"abc`, `"abcdefghijklmnop`, "\"\xff\xfe\"", `[[[[]]]]`, `{"a":[}`, `]`, ``, ` `,
		strings.Repeat("[", 600) + strings.Repeat("]", 600),
	} {
		got, want := scanValid([]byte(c)), json.Valid([]byte(c))
		if got && !want || !got && want && !strings.HasPrefix(c, "[[[[[") {
			t.Errorf("%q: scan %v, json.Valid %v", c, got, want)
		}
	}
}

// FuzzJSONScanValidity: the scan accepts only what json.Valid accepts,
// and everything it accepts that is nested less deeply than its limit.
func FuzzJSONScanValidity(f *testing.F) {
	for _, c := range []string{`{"a":[1,{"b":"c\u00e9\n"}],"d":-1.5e3}`, `"0123456789abcdef\"0123456789"`, `[true,false,null]`} {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, want := scanValid(b), json.Valid(b)
		if got && !want {
			t.Fatalf("%q: the scan accepts what json.Valid rejects", b)
		}
		if want && !got && strings.Count(string(b), "[")+strings.Count(string(b), "{") < maxScanDepth {
			t.Fatalf("%q: the scan rejects valid JSON", b)
		}
	})
}
