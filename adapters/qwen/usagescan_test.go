package qwen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// callLines are the api_response lines of the recorded files.
func callLines(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, name := range []string{"qwen-usage-tool.jsonl", "qwen-usage-memory.jsonl", "qwen-tool-turn.jsonl"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			if bytes.Contains(l, apiResponseName) {
				out = append(out, l)
			}
		}
	}
	if len(out) < 5 {
		t.Fatalf("%d api_response lines in the recorded files", len(out))
	}
	return out
}

// sameAsDecoded fails unless scanAPIResponse gives up on line or reads
// what encoding/json decodes of it.
func sameAsDecoded(t *testing.T, line []byte) (scanned bool) {
	t.Helper()
	var f apiFields
	if !scanAPIResponse(line, &f) {
		return false
	}
	var r apiResponse
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("the scan read %q, which encoding/json rejects: %v", line, err)
	}
	want := r.fields()
	norm := func(a *apiFields) {
		for _, p := range []*[]byte{&a.uuid, &a.sessionID, &a.timestamp, &a.typ, &a.subtype, &a.cwd, &a.name, &a.responseID, &a.model} {
			if len(*p) == 0 {
				*p = nil
			}
		}
	}
	norm(&f)
	norm(&want)
	if !reflect.DeepEqual(f, want) {
		t.Fatalf("%q: scanned %+v, encoding/json %+v", line, f, want)
	}
	return true
}

// TestScanAPIResponse: the one-pass reader reads the recorded calls as
// encoding/json does, and leaves to it what it cannot be sure of.
func TestScanAPIResponse(t *testing.T) {
	for _, l := range callLines(t) {
		if !sameAsDecoded(t, l) {
			t.Errorf("the scan gave up on a recorded call: %s", l)
		}
	}
	for _, l := range []string{
		`{"type":"system","Type":"user"}`, // a key encoding/json folds
		`{"type":"system","type":"user"}`, // a key twice
		`{"systemPayload":{"uiEvent":{"input_token_count":1.5}}}`,
		`{"systemPayload":{"uiEvent":{"input_token_count":"1"}}}`,
		`{"typ\u0065":"system"}`,
	} {
		if sameAsDecoded(t, []byte(l)) {
			t.Errorf("the scan read %s, which it should leave to encoding/json", l)
		}
	}
	for _, l := range []string{
		`{"type":"system","systemPayload":null}`,
		`{"type":"system","systemPayload":{"uiEvent":null,"other":[1,{"a":"b"}]}}`,
		`{"type":"system","cwd":"/p\u00e9","systemPayload":{"uiEvent":{"model":null,"input_token_count":null}}}`,
	} {
		if !sameAsDecoded(t, []byte(l)) {
			t.Errorf("the scan gave up on %s", l)
		}
	}
}

// FuzzScanAPIResponse: whatever the line, the one-pass reader either
// gives up or reads what encoding/json decodes.
func FuzzScanAPIResponse(f *testing.F) {
	for _, l := range callLines(f) {
		f.Add(l)
	}
	f.Add([]byte(`{"type":"system","systemPayload":{"uiEvent":null}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsDecoded(t, line)
	})
}

// BenchmarkAPIResponse reads one recorded call's line with the one-pass
// reader and with encoding/json, in the same run.
func BenchmarkAPIResponse(b *testing.B) {
	line := callLines(b)[0]
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			var f apiFields
			if !scanAPIResponse(line, &f) {
				b.Fatal("gave up")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		for b.Loop() {
			var r apiResponse
			if err := json.Unmarshal(line, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
