package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// fakeWrapper serves the control socket of session id under root; answer
// is called with each request and returns the response line (nil: never
// answer until the test ends).
func fakeWrapper(t *testing.T, root, id string, answer func(control.Request) []byte) {
	t.Helper()
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "claude", IntegrationMode: "launcher_wrapper"}); err != nil {
		t.Fatal(err)
	}
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "unix", statedir.ControlSocketPath(root, id))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); _ = ln.Close() })
	go func() { // exits when the listener is closed
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // exits when answered or the test ends
				defer conn.Close()
				line, err := bufio.NewReader(conn).ReadBytes('\n')
				if err != nil {
					return
				}
				var req control.Request
				_ = json.Unmarshal(line, &req)
				resp := answer(req)
				if resp == nil {
					<-done
					return
				}
				_, _ = conn.Write(append(resp, '\n'))
			}()
		}
	}()
}

func hookOpts(root, dir string, stdin string, timeout time.Duration) (hookOptions, *bytes.Buffer) {
	var out bytes.Buffer
	env := map[string]string{"LIFELOOP_STATE_DIR": root, "LIFELOOP_SESSION_DIR": dir}
	return hookOptions{
		Adapter: "claude", Hook: "UserPromptSubmit", Timeout: timeout,
		In: strings.NewReader(stdin), Out: &out, Getenv: func(k string) string { return env[k] },
		Now: time.Now, IDs: ids.NewULIDSource(nil, nil), Registry: builtin.Default(),
	}, &out
}

const promptJSON = `{"session_id":"hs-1","prompt_id":"p-1","hook_event_name":"UserPromptSubmit","prompt":"hello"}`

func TestHostHookForwardsToLiveWrapper(t *testing.T) {
	root := filepath.Join(t.TempDir(), "st")
	var got hooks.HookArgs
	var op string
	fakeWrapper(t, root, "w1", func(req control.Request) []byte {
		op = req.Op
		_ = json.Unmarshal(req.Args, &got)
		// The wrapper renders the hook's response (hooks.HookReply.Response).
		return []byte(`{"ok":true,"result":{"additional_context":"{\"payloads\":[]}","receipts":1,"response":"{\"hookSpecificOutput\":{}}\n"}}`)
	})
	opts, out := hookOpts(root, statedir.SessionDir(root, "w1"), promptJSON, 10*time.Second)
	hostHookRun(t.Context(), opts)
	want := `{"hookSpecificOutput":{}}` + "\n"
	if out.String() != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	if op != control.OpHook || got.Adapter != "claude" || got.Hook != "UserPromptSubmit" || string(got.Stdin) != promptJSON {
		t.Fatalf("wrapper got op %q args %+v", op, got)
	}
	// The wrapper records; host-hook adds nothing of its own.
	if _, err := os.Stat(statedir.ReceiptsPath(root, "w1")); !os.IsNotExist(err) {
		t.Fatalf("host-hook wrote the wrapper's ledger: %v", err)
	}
}

func TestHostHookWrapperFailures(t *testing.T) {
	tests := []struct {
		name   string
		answer func(control.Request) []byte
		class  string
	}{
		{"wrapper never answers", func(control.Request) []byte { return nil }, `"failure_class":"timeout"`},
		{"wrapper refuses", func(control.Request) []byte { return []byte(`{"ok":false,"error":"boom"}`) }, `"failure_class":"transport_error"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "st")
			fakeWrapper(t, root, "w2", tt.answer)
			opts, out := hookOpts(root, statedir.SessionDir(root, "w2"), promptJSON, 300*time.Millisecond)
			hostHookRun(t.Context(), opts)
			if out.Len() != 0 {
				t.Fatalf("stdout %q, want the empty response", out)
			}
			data, err := os.ReadFile(statedir.ReceiptsPath(root, "w2"))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `"status":"failed"`) || !strings.Contains(string(data), tt.class) || !strings.Contains(string(data), `"event":"frame.opening"`) {
				t.Fatalf("receipts:\n%s\nwant a failed frame.opening with %s", data, tt.class)
			}
		})
	}
}

// TestHostHookWrapperKilledMidCall: a wrapper killed while a hook called
// it closes its socket and then, a moment later, frees its lock. The
// hook records nothing then (the seal tells the end; a failed moment
// would be a second story); a wrapper that lives on (its lock held) gets
// the failure recorded.
func TestHostHookWrapperKilledMidCall(t *testing.T) {
	for _, dies := range []bool{true, false} {
		t.Run(map[bool]string{true: "dies", false: "lives"}[dies], func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "st")
			if err := statedir.WriteSession(root, statedir.SessionRecord{ID: "w3", State: statedir.StateRunning, AdapterID: "claude", IntegrationMode: "launcher_wrapper"}); err != nil {
				t.Fatal(err)
			}
			lock, err := statedir.HoldWrapper(root, "w3")
			if err != nil {
				t.Fatal(err)
			}
			defer lock.Close()
			if dies {
				// No socket: the call fails at once, and the lock goes
				// 100 ms later.
				time.AfterFunc(100*time.Millisecond, func() { _ = lock.Close() })
			}
			opts, _ := hookOpts(root, statedir.SessionDir(root, "w3"), promptJSON, 10*time.Second)
			hostHookRun(t.Context(), opts)
			data, err := os.ReadFile(statedir.ReceiptsPath(root, "w3"))
			if dies && !os.IsNotExist(err) {
				t.Fatalf("a hook that lost its call to a dying wrapper recorded:\n%s (%v)", data, err)
			}
			if !dies && !strings.Contains(string(data), `"status":"failed"`) {
				t.Fatalf("receipts:\n%s\nwant the failed call recorded while the wrapper lives (%v)", data, err)
			}
		})
	}
}

func BenchmarkHostHookNative(b *testing.B) {
	root := filepath.Join(b.TempDir(), "st")
	for b.Loop() {
		opts, _ := hookOpts(root, "", promptJSON, DefaultHookTimeout)
		hostHookRun(b.Context(), opts)
	}
}
