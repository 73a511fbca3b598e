package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrBadRequest is wrapped by DecodeHookArgs' and CheckHookArgs' errors:
// the request is not a hook call the wrapper can take, and nothing is
// recorded for it.
var ErrBadRequest = errors.New("hook: bad request")

// DecodeHookArgs decodes a hook request strictly: one JSON object of
// HookArgs' fields and nothing else.
func DecodeHookArgs(raw []byte) (HookArgs, error) {
	var a HookArgs
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return HookArgs{}, fmt.Errorf("%w: bad arguments: %w", ErrBadRequest, err)
	}
	if dec.More() {
		return HookArgs{}, fmt.Errorf("%w: bad arguments: more than one JSON value", ErrBadRequest)
	}
	return a, nil
}

// CheckHookArgs reports whether a is a call of one of spec's hooks, the
// hooks of the adapter a names (nil when it has none), carrying the
// hook's input. A request that passes is a real hook call: input that
// the hook's mapping then cannot read is the harness's failure (Map's
// error), recorded as such.
func CheckHookArgs(spec *Spec, a HookArgs) error {
	switch {
	case a.Adapter == "":
		return fmt.Errorf("%w: the request names no adapter", ErrBadRequest)
	case a.Hook == "":
		return fmt.Errorf("%w: the request names no hook", ErrBadRequest)
	case spec == nil:
		return fmt.Errorf("%w: adapter %q has no native hooks", ErrBadRequest, a.Adapter)
	case !spec.known(a.Hook):
		return fmt.Errorf("%w: %q is not a hook of adapter %q; known: %v", ErrBadRequest, a.Hook, a.Adapter, append(spec.Names(), spec.Ignored...))
	}
	if spec.FromArgv(a.Hook) {
		if len(a.Argv) == 0 {
			return fmt.Errorf("%w: %s/%s carries no hook input (it is the last argument)", ErrBadRequest, a.Adapter, a.Hook)
		}
		return nil
	}
	if len(a.Stdin) == 0 && a.StdinBase64 == "" {
		return fmt.Errorf("%w: %s/%s carries no hook input (stdin or stdin_base64)", ErrBadRequest, a.Adapter, a.Hook)
	}
	return nil
}
