package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// exampleKind maps an example file name onto its envelope kind.
func exampleKind(name string) string {
	for _, k := range ConformanceKinds {
		if strings.HasPrefix(name, k) {
			return k
		}
	}
	return ""
}

func genericJSON(t *testing.T, b []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return v
}

// TestExamplesRoundTrip decodes every documented example, re-encodes it and
// checks that the encoding carries exactly the same JSON.
func TestExamplesRoundTrip(t *testing.T) {
	files, err := filepath.Glob("testdata/examples/*.json")
	if err != nil || len(files) < 10 {
		t.Fatalf("expected the example files, got %d (%v)", len(files), err)
	}
	now := time.Unix(1778100000, 0)
	for _, f := range files {
		name := filepath.Base(f)
		kind := exampleKind(name)
		if kind == "" {
			continue // not an envelope (e.g. transport inputs), tested elsewhere
		}
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := DecodeKind(kind, data, now)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if want, got := genericJSON(t, data), genericJSON(t, out); !reflect.DeepEqual(want, got) {
				t.Errorf("re-encoded JSON differs\nwant %s\ngot  %s", data, out)
			}
			again, err := DecodeKind(kind, out, now)
			if err != nil {
				t.Fatalf("decode of re-encoding: %v", err)
			}
			if !reflect.DeepEqual(v, again) {
				t.Errorf("second decode differs:\n%#v\n%#v", v, again)
			}
		})
	}
}
