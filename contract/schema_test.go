package contract

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/schema"
)

// TestSchemasAgreeWithValidator validates every conformance case's data
// against the JSON Schema of its kind and checks that the schema verdict
// is the case's expectation: schema_expect when the case sets it (rules
// beyond a schema), else expect.
func TestSchemasAgreeWithValidator(t *testing.T) {
	sv, err := schema.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range corpusFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseConformanceCase(data)
			if err != nil {
				t.Fatal(err)
			}
			want := c.Expect
			if c.SchemaExpect != "" {
				want = c.SchemaExpect
				if want == c.Expect {
					t.Errorf("schema_expect equals expect; drop it")
				}
			}
			verr := sv.Validate(c.Kind, c.Data)
			switch {
			case want == "valid" && verr != nil:
				t.Fatalf("%s: schema rejects: %v", c.Description, verr)
			case want == "invalid" && verr == nil:
				t.Fatalf("%s: schema accepts a document the contract rejects (%s)", c.Description, c.ExpectError)
			}
		})
	}
}

// TestExamplesMatchSchemas checks every documented example against its
// schema.
func TestExamplesMatchSchemas(t *testing.T) {
	sv, err := schema.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/examples/*.json")
	for _, f := range files {
		kind := exampleKind(filepath.Base(f))
		if kind == "" {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := sv.Validate(kind, data); err != nil {
				t.Fatal(err)
			}
		})
	}
}
