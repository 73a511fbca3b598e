// Package schema holds the JSON Schemas (draft 2020-12) of the Lifeloop
// lifecycle contract lifeloop.v0.2, one file per envelope kind plus
// common.schema.json with the shared definitions.
//
// The schemas express the contract's shape: required, required-nullable
// and optional keys, enum values, closed objects, non-empty strings,
// digest form, and the cross-field rules a schema can state (body xor
// body_ref, status failed with failure and retry class, frame.* events
// need frame_context, receipt.emitted never gets a receipt). Rules that
// depend on content or context (byte_size and digest against the body,
// base64 decoding, expiry, self-parenting, event modes declared in
// integration_modes, telemetry_only placements, duplicate keys) are only
// enforced by the Go validator in package contract.
package schema

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds every *.schema.json file.
//
//go:embed *.json
var FS embed.FS

// BaseURL is the prefix of every schema's $id; file NAME.schema.json has
// $id BaseURL + "NAME.schema.json".
const BaseURL = "https://github.com/lifeloop/lifeloop/schema/"

// Kinds lists the envelope kinds that have a schema, named as in the
// conformance corpus.
var Kinds = []string{
	"callback_request", "callback_response", "dispatch_envelope", "payload_envelope",
	"lifecycle_receipt", "adapter_manifest", "capability_request",
}

// Compile returns the compiled schema for kind, with every schema file
// loaded so that cross-file references resolve offline.
func Compile(kind string) (*jsonschema.Schema, error) {
	if !slices.Contains(Kinds, kind) {
		return nil, fmt.Errorf("no schema for kind %q; known: %s", kind, strings.Join(Kinds, ", "))
	}
	c, err := newCompiler()
	if err != nil {
		return nil, err
	}
	return c.Compile(BaseURL + kind + ".schema.json")
}

func newCompiler() (*jsonschema.Compiler, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	files, err := fs.Glob(FS, "*.schema.json")
	if err != nil {
		return nil, err
	}
	for _, name := range files {
		b, err := FS.ReadFile(name)
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		if err := c.AddResource(BaseURL+name, doc); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
	}
	return c, nil
}

// Validator holds every kind's compiled schema; build it once with
// NewValidator when validating many documents. It is safe for concurrent
// use.
type Validator struct {
	compiled map[string]*jsonschema.Schema
}

// NewValidator compiles the schema of every kind.
func NewValidator() (*Validator, error) {
	c, err := newCompiler()
	if err != nil {
		return nil, err
	}
	v := &Validator{compiled: make(map[string]*jsonschema.Schema, len(Kinds))}
	for _, k := range Kinds {
		sch, err := c.Compile(BaseURL + k + ".schema.json")
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", k, err)
		}
		v.compiled[k] = sch
	}
	return v, nil
}

// Validate checks the JSON document data against the schema for kind.
func (v *Validator) Validate(kind string, data []byte) error {
	sch, ok := v.compiled[kind]
	if !ok {
		return fmt.Errorf("no schema for kind %q; known: %s", kind, strings.Join(Kinds, ", "))
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return sch.Validate(inst)
}

// Validate checks the JSON document data against the schema for kind,
// compiling the schemas for this one call.
func Validate(kind string, data []byte) error {
	v, err := NewValidator()
	if err != nil {
		return err
	}
	return v.Validate(kind, data)
}
