package schema

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
)

func TestEverySchemaCompiles(t *testing.T) {
	for _, k := range Kinds {
		t.Run(k, func(t *testing.T) {
			if _, err := Compile(k); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := Compile("receipt"); err == nil || !strings.Contains(err.Error(), "known: callback_request") {
		t.Fatalf("unknown kind: %v", err)
	}
}

func TestSchemaFilesDeclareDraftAndID(t *testing.T) {
	files, _ := fs.Glob(FS, "*.schema.json")
	if len(files) != len(Kinds)+1 {
		t.Fatalf("%d schema files, want %d", len(files), len(Kinds)+1)
	}
	for _, f := range files {
		b, _ := FS.ReadFile(f)
		var head struct {
			Schema string `json:"$schema"`
			ID     string `json:"$id"`
		}
		if err := json.Unmarshal(b, &head); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if head.Schema != "https://json-schema.org/draft/2020-12/schema" || head.ID != BaseURL+f {
			t.Errorf("%s: $schema %q $id %q", f, head.Schema, head.ID)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name, kind, doc, want string
	}{
		{"minimal capability request", "capability_request", `{"client_id":"c"}`, ""},
		{"unknown key", "capability_request", `{"client_id":"c","x":1}`, "additional properties"},
		{"empty client", "capability_request", `{"client_id":""}`, "minLength"},
		{"not JSON", "capability_request", `{`, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.kind, []byte(tt.doc))
			if tt.want == "" && err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestValidatorConcurrentUse(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Validate("receipt", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "no schema for kind") {
		t.Fatalf("unknown kind: %v", err)
	}
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			doc := `{"client_id":"c"}`
			if i%2 == 1 {
				doc = `{"client_id":""}`
			}
			err := v.Validate("capability_request", []byte(doc))
			if (i%2 == 1) == (err == nil) {
				errs <- fmt.Errorf("document %d: verdict %w", i, err)
				return
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
