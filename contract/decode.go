package contract

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// The strict decoder reads a document into a generic tree first (keeping
// numbers exact and rejecting duplicate keys and trailing data), then walks
// the tree against the Go type. Walking by hand, instead of relying on
// encoding/json's DisallowUnknownFields, gives every error the JSON path of
// the offending field, reports all missing required keys of an object at
// once, and distinguishes required, required-nullable and optional keys
// (see the tag convention in types.go).

// DecodeReceipt strictly decodes and validates a LifecycleReceipt. On any
// error it returns the zero value and a *ValidationError.
func DecodeReceipt(data []byte) (LifecycleReceipt, error) {
	return decodeValid[LifecycleReceipt](data, LifecycleReceipt.Validate)
}

// DecodeCallbackRequest strictly decodes and validates a CallbackRequest.
func DecodeCallbackRequest(data []byte) (CallbackRequest, error) {
	return decodeValid[CallbackRequest](data, CallbackRequest.Validate)
}

// DecodeCallbackResponse strictly decodes and validates a CallbackResponse.
func DecodeCallbackResponse(data []byte) (CallbackResponse, error) {
	return decodeValid[CallbackResponse](data, CallbackResponse.Validate)
}

// DecodeDispatchEnvelope strictly decodes and validates a DispatchEnvelope.
// Payload bodies that are not Unicode text are refused (checkUnicode).
func DecodeDispatchEnvelope(data []byte) (DispatchEnvelope, error) {
	if err := checkUnicode(data); err != nil {
		return DispatchEnvelope{}, err
	}
	return decodeValid[DispatchEnvelope](data, DispatchEnvelope.Validate)
}

// DecodePayloadEnvelope strictly decodes and validates a PayloadEnvelope.
// It does not run the content checks of PayloadEnvelope.Check, which need
// the current time. A body that is not Unicode text is refused
// (checkUnicode): bytes go as content_encoding base64.
func DecodePayloadEnvelope(data []byte) (PayloadEnvelope, error) {
	if err := checkUnicode(data); err != nil {
		return PayloadEnvelope{}, err
	}
	return decodeValid[PayloadEnvelope](data, PayloadEnvelope.Validate)
}

// DecodeManifest strictly decodes and validates an AdapterManifest.
func DecodeManifest(data []byte) (AdapterManifest, error) {
	return decodeValid[AdapterManifest](data, AdapterManifest.Validate)
}

// DecodeCapabilityRequest strictly decodes and validates a
// CapabilityRequest.
func DecodeCapabilityRequest(data []byte) (CapabilityRequest, error) {
	return decodeValid[CapabilityRequest](data, CapabilityRequest.Validate)
}

func decodeValid[T any](data []byte, validate func(T) error) (T, error) {
	var v T
	if err := decodeStrict(data, &v); err != nil {
		var zero T
		return zero, err
	}
	if err := validate(v); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// decodeStrict decodes data into the value dst points to.
func decodeStrict(data []byte, dst any) error {
	tree, err := parseTree(data)
	if err != nil {
		return err
	}
	rv := reflect.ValueOf(dst).Elem()
	return assign("", tree, rv, true)
}

// parseTree parses one JSON document into maps, slices, strings,
// json.Number, bools and nil, rejecting duplicate object keys.
func parseTree(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec, "")
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &ValidationError{Msg: "invalid JSON: unexpected data after the top-level value"}
	}
	return v, nil
}

func syntaxError(err error) error {
	if errors.Is(err, io.EOF) {
		return &ValidationError{Msg: "invalid JSON: unexpected end of input"}
	}
	return &ValidationError{Msg: "invalid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
}

func parseValue(dec *json.Decoder, path string) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := map[string]any{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, syntaxError(err)
				}
				key, ok := kt.(string)
				if !ok {
					return nil, &ValidationError{Field: path, Msg: "invalid JSON: object key is not a string"}
				}
				kp := joinKey(path, key)
				if _, dup := obj[key]; dup {
					return nil, &ValidationError{Field: kp, Msg: "duplicate key"}
				}
				val, err := parseValue(dec, kp)
				if err != nil {
					return nil, err
				}
				obj[key] = val
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(err)
			}
			return obj, nil
		case '[':
			arr := []any{}
			for i := 0; dec.More(); i++ {
				val, err := parseValue(dec, fmt.Sprintf("%s[%d]", path, i))
				if err != nil {
					return nil, err
				}
				arr = append(arr, val)
			}
			if _, err := dec.Token(); err != nil {
				return nil, syntaxError(err)
			}
			return arr, nil
		default:
			return nil, &ValidationError{Field: path, Msg: "invalid JSON: unexpected " + t.String()}
		}
	default:
		return t, nil
	}
}

func joinKey(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var (
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	schemaVersionType   = reflect.TypeFor[SchemaVersion]()
)

// fieldSpec is one wire key of a struct.
type fieldSpec struct {
	name      string
	index     int
	omitempty bool // optional key
	nullable  bool // pointer: null allowed
	absentOK  bool // contract:"optional"
}

func fieldsOf(t reflect.Type) []fieldSpec {
	specs := make([]fieldSpec, 0, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("json")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		specs = append(specs, fieldSpec{
			name:      name,
			index:     i,
			omitempty: slices.Contains(strings.Split(opts, ","), "omitempty"),
			nullable:  f.Type.Kind() == reflect.Pointer,
			absentOK:  f.Tag.Get("contract") == "optional",
		})
	}
	return specs
}

// typeName describes a JSON value for error messages.
func typeName(raw any) string {
	switch raw.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	default:
		return fmt.Sprintf("%T", raw)
	}
}

func mismatch(path, want string, raw any) error {
	return &ValidationError{Field: path, Msg: fmt.Sprintf("must be %s, got %s", want, typeName(raw))}
}

// assign stores raw into v. keepEmpty is false for optional keys, whose
// empty arrays and objects decode to nil so that they re-encode as absent.
func assign(path string, raw any, v reflect.Value, keepEmpty bool) error {
	if v.Type() == schemaVersionType {
		sv, err := schemaVersionFrom(raw)
		if err != nil {
			return &ValidationError{Field: path, Msg: err.Error()}
		}
		v.SetString(string(sv))
		return nil
	}
	if v.Kind() != reflect.Pointer && reflect.PointerTo(v.Type()).Implements(textUnmarshalerType) {
		s, ok := raw.(string)
		if !ok {
			return mismatch(path, "a string", raw)
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			return &ValidationError{Field: path, Msg: err.Error()}
		}
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if raw == nil {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := assign(path, raw, p.Elem(), true); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Interface:
		v.Set(reflect.ValueOf(&raw).Elem())
		return nil
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return mismatch(path, "an object", raw)
		}
		return assignStruct(path, obj, v)
	case reflect.Slice:
		arr, ok := raw.([]any)
		if !ok {
			return mismatch(path, "an array", raw)
		}
		if len(arr) == 0 && !keepEmpty {
			v.SetZero()
			return nil
		}
		s := reflect.MakeSlice(v.Type(), len(arr), len(arr))
		for i, item := range arr {
			if err := assign(fmt.Sprintf("%s[%d]", path, i), item, s.Index(i), true); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return mismatch(path, "an object", raw)
		}
		if len(obj) == 0 && !keepEmpty {
			v.SetZero()
			return nil
		}
		return assignMap(path, obj, v)
	case reflect.String:
		s, ok := raw.(string)
		if !ok {
			return mismatch(path, "a string", raw)
		}
		v.SetString(s)
		return nil
	case reflect.Bool:
		b, ok := raw.(bool)
		if !ok {
			return mismatch(path, "a boolean", raw)
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := raw.(json.Number)
		if !ok {
			return mismatch(path, "an integer", raw)
		}
		i, err := strconv.ParseInt(string(n), 10, v.Type().Bits())
		if err != nil {
			return &ValidationError{Field: path, Msg: fmt.Sprintf("must be an integer in range, got %s", n)}
		}
		v.SetInt(i)
		return nil
	case reflect.Uint, reflect.Uint64, reflect.Uint32:
		n, ok := raw.(json.Number)
		if !ok {
			return mismatch(path, "a non-negative integer", raw)
		}
		u, err := strconv.ParseUint(string(n), 10, v.Type().Bits())
		if err != nil {
			return &ValidationError{Field: path, Msg: fmt.Sprintf("must be a non-negative integer in range, got %s", n)}
		}
		v.SetUint(u)
		return nil
	default:
		return &ValidationError{Field: path, Msg: "unsupported Go type " + v.Type().String()}
	}
}

func assignStruct(path string, obj map[string]any, v reflect.Value) error {
	specs := fieldsOf(v.Type())
	known := make(map[string]fieldSpec, len(specs))
	for _, s := range specs {
		known[s.name] = s
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := known[k]; !ok {
			names := make([]string, len(specs))
			for i, s := range specs {
				names[i] = s.name
			}
			return &ValidationError{Field: joinKey(path, k), Msg: "unknown field; allowed: " + strings.Join(names, ", ")}
		}
	}
	var missing []string
	for _, s := range specs {
		if _, ok := obj[s.name]; !ok && !s.omitempty && !s.absentOK {
			missing = append(missing, s.name)
		}
	}
	if len(missing) > 0 {
		return &ValidationError{Field: path, Msg: "missing required key(s): " + strings.Join(missing, ", ") +
			" (required keys must be present; required-nullable keys are written as null when empty)"}
	}
	for _, s := range specs {
		raw, ok := obj[s.name]
		if !ok {
			continue
		}
		fp := joinKey(path, s.name)
		if raw == nil && !s.nullable && !s.omitempty {
			return &ValidationError{Field: fp, Msg: "must not be null"}
		}
		if raw == nil && s.omitempty {
			continue
		}
		if err := assign(fp, raw, v.Field(s.index), !s.omitempty); err != nil {
			return err
		}
	}
	return nil
}

func assignMap(path string, obj map[string]any, v reflect.Value) error {
	t := v.Type()
	m := reflect.MakeMapWithSize(t, len(obj))
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		kp := joinKey(path, k)
		kv := reflect.New(t.Key()).Elem()
		if err := assign(kp, k, kv, true); err != nil {
			return err
		}
		ev := reflect.New(t.Elem()).Elem()
		if err := assign(kp, obj[k], ev, true); err != nil {
			return err
		}
		m.SetMapIndex(kv, ev)
	}
	v.Set(m)
	return nil
}
