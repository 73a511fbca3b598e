package refclient

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const receipt = `{"schema_version":"lifeloop.v0.2","receipt_id":"lfr_1","idempotency_key":null,"client_id":"c","adapter_id":"codex","invocation_id":"inv_1","event":"session.started","event_id":"evt_1","sequence":1,"parent_receipt_id":null,"integration_mode":"launcher_wrapper","status":"observed","at_epoch_s":1,"failure_class":null,"retry_class":null}`

// The decoder is as strict as the reference's serde types: each of these
// must be refused, naming what is wrong.
func TestDecodeRefuses(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"integer schema_version", strings.Replace(receipt, `"lifeloop.v0.2"`, `1`, 1), "schema_version: invalid type: number 1, expected a string"},
		{"older contract", strings.Replace(receipt, `"lifeloop.v0.2"`, `"lifeloop.v0.1"`, 1), "schema_version mismatch"},
		{"unknown field", strings.Replace(receipt, `"status"`, `"surprise":1,"status"`, 1), "unknown field `surprise`"},
		{"missing required-nullable", strings.Replace(receipt, `"sequence":1,`, ``, 1), "missing required-nullable field(s): sequence"},
		{"missing required", strings.Replace(receipt, `"event_id":"evt_1",`, ``, 1), "missing field `event_id`"},
		{"unknown event", strings.Replace(receipt, `session.started`, `session.begun`, 1), "unknown variant `session.begun`"},
		{"negative integer", strings.Replace(receipt, `"at_epoch_s":1`, `"at_epoch_s":-1`, 1), "expected u64"},
		{"null string", strings.Replace(receipt, `"client_id":"c"`, `"client_id":null`, 1), "client_id: invalid type: null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r LifecycleReceipt
			err := Decode([]byte(tt.in), &r)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	var r LifecycleReceipt
	if err := Decode([]byte(receipt), &r); err != nil || r.Sequence == nil || *r.Sequence != 1 {
		t.Fatalf("a valid receipt: %v (%+v)", err, r)
	}
}

// Every example of a document kind lifeloop writes in docs/contract.md
// (contract/testdata/examples) reads with the reference types.
func TestDocumentedExamplesDecode(t *testing.T) {
	kinds := map[string]func() any{
		"lifecycle_receipt": func() any { return &LifecycleReceipt{} },
		"dispatch_envelope": func() any { return &DispatchEnvelope{} },
		"payload_envelope":  func() any { return &PayloadEnvelope{} },
		"callback_request":  func() any { return &CallbackRequest{} },
		"callback_response": func() any { return &CallbackResponse{} },
		"adapter_manifest":  func() any { return &AdapterManifest{} },
	}
	files, err := filepath.Glob("../../contract/testdata/examples/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	n := 0
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		for kind, mk := range kinds {
			if !strings.HasPrefix(base, kind) {
				continue
			}
			n++
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := Decode(data, mk()); err != nil {
				t.Errorf("%s: %v", base, err)
			}
		}
	}
	if n < 6 {
		t.Errorf("decoded only %d examples", n)
	}
}

// The fields accepted beyond the reference 0.1 types are exactly the
// known differences docs/contract.md lists.
func TestExtensionsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "## Known differences from the reference")
	if !ok {
		t.Fatal(`docs/contract.md has no "## Known differences from the reference" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	ext := Extensions()
	if len(ext) < 4 {
		t.Fatalf("Extensions() = %v", ext)
	}
	for _, e := range ext {
		_, key, _ := strings.Cut(e, ".")
		if !strings.Contains(section, "`"+key+"`") {
			t.Errorf("extension %s (key `%s`) is not listed in docs/contract.md's known differences", e, key)
		}
	}
}
