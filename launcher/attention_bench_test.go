package launcher

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/ptyio"
)

// BenchmarkIdleWaitingWakeups counts the supervisor loop's passes (its
// wake-ups) while a session waits for a person, over a window of
// idleWindow, with the default tick and activity check: with a tracker
// (the session sits in needs_permission) and without one (a harness with
// no attention reader). Attention tracking must add none: the keys are
// read by the activity check that runs anyway. Reported per window.
//
//	go test ./launcher -run '^$' -bench IdleWaitingWakeups -benchtime 1x
func BenchmarkIdleWaitingWakeups(b *testing.B) {
	for _, c := range []struct {
		name    string
		tracker bool
	}{{"tracker", true}, {"none", false}} {
		b.Run(c.name, func(b *testing.B) {
			var passes, ticks float64
			for range b.N {
				p, tk := idleWakeups(b, c.tracker)
				passes += p
				ticks += tk
			}
			b.ReportMetric(passes/float64(b.N), "wakeups/window")
			b.ReportMetric(ticks/float64(b.N), "ticks/window")
		})
	}
}

// idleWindow spans one interval tick (DefaultTick) and ten activity
// checks.
const idleWindow = 11 * time.Second

// idleWakeups runs one session that waits idleWindow and returns the
// loop passes and the ticks recorded meanwhile.
func idleWakeups(b *testing.B, tracker bool) (passes, ticks float64) {
	root := b.TempDir()
	id := "ses_01BENCH000000000000000000"
	if _, err := statedir.CreateSessionDir(root, id); err != nil {
		b.Fatal(err)
	}
	rec := &memRecorder{}
	ft := &fakeTerminal{}
	var n atomic.Int64
	cfg := Config{
		StateDir: root, Record: statedir.SessionRecord{ID: id, AdapterID: "generic"},
		Spec: ptyio.ChildSpec{Path: "harness"}, Recorder: rec,
		OpenTerminal:  func(ptyio.TerminalConfig) (Terminal, error) { return ft, nil },
		ControlSocket: control.SocketIn(statedir.SessionDir(root, id)),
		Tick:          DefaultTick, IdleAfter: DefaultIdleAfter, Grace: 50 * time.Millisecond,
		passed: func() { n.Add(1) },
	}
	if tracker {
		cfg.Adapter, cfg.Record.AdapterID = adapters.AdapterOf(claude.Harness{}), "claude"
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), cfg)
		done <- err
	}()
	call := func(op string, args any) {
		if err := control.Call(context.Background(), cfg.ControlSocket, op, args, nil); err != nil {
			b.Fatalf("%s: %v", op, err)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ft.count() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the harness did not start")
		}
	}
	call(control.OpEmit, control.EmitArgs{Event: contract.EventFrameOpening, FrameID: "p1"})
	if tracker {
		call(control.OpHook, hooks.HookArgs{Adapter: "claude", Hook: "PermissionRequest",
			Stdin: json.RawMessage(`{"hook_event_name":"PermissionRequest","session_id":"s1","prompt_id":"p1","tool_name":"Bash"}`)})
	}
	from, events := n.Load(), len(rec.events())
	time.Sleep(idleWindow)
	passes = float64(n.Load() - from)
	ticks = float64(countEvents(rec.events()[events:], contract.EventSupervisorTick))
	ft.proc(0).exit(ptyio.ExitStatus{Code: 0})
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	return passes, ticks
}

// BenchmarkHookToAttentionTick measures a hook call that changes the
// attention through the control socket up to its answer, by which time
// the attention_changed tick is recorded (the change is recorded at
// once, inside the call): each call alternates a permission dialog
// (needs_permission) and the idle notification (waiting_for_input).
//
//	go test ./launcher -run '^$' -bench HookToAttentionTick
func BenchmarkHookToAttentionTick(b *testing.B) {
	root := b.TempDir()
	id := "ses_01BENCH000000000000000001"
	if _, err := statedir.CreateSessionDir(root, id); err != nil {
		b.Fatal(err)
	}
	rec := &memRecorder{}
	ft := &fakeTerminal{}
	cfg := Config{
		StateDir: root, Record: statedir.SessionRecord{ID: id, AdapterID: "claude"},
		Spec: ptyio.ChildSpec{Path: "harness"}, Recorder: rec, Adapter: adapters.AdapterOf(claude.Harness{}),
		OpenTerminal:  func(ptyio.TerminalConfig) (Terminal, error) { return ft, nil },
		ControlSocket: control.SocketIn(statedir.SessionDir(root, id)),
		Tick:          DefaultTick, IdleAfter: DefaultIdleAfter, Grace: 50 * time.Millisecond,
	}
	done := make(chan error, 1)
	go func() {
		_, err := Run(context.Background(), cfg)
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); ft.count() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatal("the harness did not start")
		}
	}
	calls := []hooks.HookArgs{
		{Adapter: "claude", Hook: "PermissionRequest", Stdin: json.RawMessage(`{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"Bash"}`)},
		{Adapter: "claude", Hook: "Notification", Stdin: json.RawMessage(`{"hook_event_name":"Notification","session_id":"s1","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`)},
	}
	ticks := countEvents(rec.events(), contract.EventSupervisorTick)
	b.ResetTimer()
	for i := range b.N {
		if err := control.Call(context.Background(), cfg.ControlSocket, control.OpHook, calls[i%2], nil); err != nil {
			b.Fatal(err)
		}
		n := countEvents(rec.events(), contract.EventSupervisorTick)
		if n < ticks+1 {
			b.Fatalf("%d ticks after the hook call, want %d: the change is recorded inside the call", n, ticks+1)
		}
		ticks = n
	}
	b.StopTimer()
	ft.proc(0).exit(ptyio.ExitStatus{Code: 0})
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
