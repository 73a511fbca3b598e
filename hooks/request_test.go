package hooks

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDecodeHookArgs(t *testing.T) {
	for _, tc := range []struct {
		raw string
		ok  bool
	}{
		{`{"adapter":"h","hook":"Stop","stdin":{}}`, true},
		{`{"x":1}`, false},
		{`[1]`, false},
		{`{"adapter":"h"} {}`, false},
		{``, false},
	} {
		_, err := DecodeHookArgs([]byte(tc.raw))
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadRequest)) {
			t.Errorf("DecodeHookArgs(%s) = %v, want ok=%v", tc.raw, err, tc.ok)
		}
	}
}

func TestCheckHookArgs(t *testing.T) {
	in := json.RawMessage(`{}`)
	for _, tc := range []struct {
		name string
		spec *Spec
		a    HookArgs
		ok   bool
	}{
		{"call", testSpec, HookArgs{Adapter: "h", Hook: "Stop", Stdin: in}, true},
		{"input not JSON is the harness's failure", testSpec, HookArgs{Adapter: "h", Hook: "Stop", StdinBase64: "eA=="}, true},
		{"argv hook", testSpec, HookArgs{Adapter: "h", Hook: "note", Argv: []string{"{}"}}, true},
		{"ignored hook", testSpec, HookArgs{Adapter: "h", Hook: "Tool", Stdin: in}, true},
		{"no adapter", testSpec, HookArgs{Hook: "Stop", Stdin: in}, false},
		{"no hook", testSpec, HookArgs{Adapter: "h", Stdin: in}, false},
		{"adapter without hooks", nil, HookArgs{Adapter: "generic", Hook: "Stop", Stdin: in}, false},
		{"unknown hook", testSpec, HookArgs{Adapter: "h", Hook: "Nope", Stdin: in}, false},
		{"no input", testSpec, HookArgs{Adapter: "h", Hook: "Stop"}, false},
		{"argv hook without argv", testSpec, HookArgs{Adapter: "h", Hook: "note", Stdin: in}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckHookArgs(tc.spec, tc.a)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadRequest)) {
				t.Errorf("CheckHookArgs = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
