package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// addSeeds adds the examples of kind and a sample of its conformance
// cases as fuzz seeds. The sample keeps the baseline coverage run short,
// so that short -fuzztime runs on a busy machine still start fuzzing.
func addSeeds(f *testing.F, kind string) {
	f.Helper()
	files, _ := filepath.Glob("testdata/examples/" + kind + "*.json")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	cases, _ := filepath.Glob("testdata/conformance/" + kind + "__*.json")
	for i, name := range cases {
		if i%6 != 0 {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		c, err := ParseConformanceCase(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add([]byte(c.Data))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
}

// roundTrip is the property every decoder must have: a document it
// accepts re-encodes into a document it accepts again, and that second
// decode encodes to the same bytes.
func roundTrip[T any](t *testing.T, data []byte, decode func([]byte) (T, error)) {
	v, err := decode(data)
	if err != nil {
		return
	}
	first, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("accepted value does not encode: %v", err)
	}
	again, err := decode(first)
	if err != nil {
		t.Fatalf("re-encoding is rejected: %v\n%s", err, first)
	}
	second, err := json.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatalf("round trip changed the document:\n%s\n%s", first, second)
	}
}

func FuzzDecodeReceipt(f *testing.F) {
	addSeeds(f, KindLifecycleReceipt)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodeReceipt) })
}

func FuzzDecodeCallbackRequest(f *testing.F) {
	addSeeds(f, KindCallbackRequest)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodeCallbackRequest) })
}

func FuzzDecodeCallbackResponse(f *testing.F) {
	addSeeds(f, KindCallbackResponse)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodeCallbackResponse) })
}

func FuzzDecodeDispatchEnvelope(f *testing.F) {
	addSeeds(f, KindDispatchEnvelope)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodeDispatchEnvelope) })
}

func FuzzDecodePayloadEnvelope(f *testing.F) {
	addSeeds(f, KindPayloadEnvelope)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodePayloadEnvelope) })
}

func FuzzDecodeManifest(f *testing.F) {
	addSeeds(f, KindAdapterManifest)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodeManifest) })
}

func FuzzDecodeCapabilityRequest(f *testing.F) {
	addSeeds(f, KindCapabilityRequest)
	f.Fuzz(func(t *testing.T, data []byte) { roundTrip(t, data, DecodeCapabilityRequest) })
}

func BenchmarkDecodeReceipt(b *testing.B) {
	data, err := os.ReadFile("testdata/examples/lifecycle_receipt.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := DecodeReceipt(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeManifest(b *testing.B) {
	data, err := os.ReadFile("testdata/examples/adapter_manifest.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := DecodeManifest(data); err != nil {
			b.Fatal(err)
		}
	}
}
