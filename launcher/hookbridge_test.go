package launcher

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestHookRequestValidated: a hook request that is not a hook call of an
// adapter with hooks is answered with an error and records nothing; in
// particular no capability.degraded claims the generic adapter's hooks
// fell from native to partial.
func TestHookRequestValidated(t *testing.T) {
	f := newFixture(t, "echo ready; while :; do sleep 0.05; done")
	f.cfg.Registry = builtin.Default()
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ready") })

	for _, tc := range []struct {
		name string
		args any
		want string
	}{
		{"garbage", map[string]any{"x": 1}, "unknown field"},
		{"not an object", []int{1}, "bad arguments"},
		{"no adapter", hooks.HookArgs{Hook: "Stop", Stdin: json.RawMessage(`{}`)}, "names no adapter"},
		{"no hook", hooks.HookArgs{Adapter: "claude", Stdin: json.RawMessage(`{}`)}, "names no hook"},
		{"adapter without hooks", hooks.HookArgs{Adapter: "generic", Hook: "Stop", Stdin: json.RawMessage(`{}`)}, "has no native hooks"},
		{"unknown adapter", hooks.HookArgs{Adapter: "nosuch", Hook: "Stop", Stdin: json.RawMessage(`{}`)}, "has no native hooks"},
		{"no input", hooks.HookArgs{Adapter: "claude", Hook: "Stop"}, "carries no hook input"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := control.Call(context.Background(), f.cfg.ControlSocket, control.OpHook, tc.args, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("hook request %s answered %v, want an error saying %q", tc.name, err, tc.want)
			}
		})
	}
	_ = control.Call(context.Background(), f.cfg.ControlSocket, control.OpAbort, nil, nil)
	if res := <-done; res.State != statedir.StateAborted {
		t.Fatalf("result %+v", res)
	}
	if n := countEvents(f.rec.events(), contract.EventCapabilityDegraded); n != 0 {
		m, _ := f.rec.last(contract.EventCapabilityDegraded)
		t.Fatalf("%d capability.degraded recorded for invalid hook requests, want none; last: %+v", n, m.Degradations)
	}
}
