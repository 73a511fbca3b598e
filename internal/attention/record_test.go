//go:build record

package attention

// The recorders of the recordings (adapters/<harness>/testdata/attention/): real harness TUIs, offline against the mock
// model (or a failing endpoint), with hooks or a plugin that append each
// payload and the time it arrived to a file, and the keys typed to answer
// a dialog. They run only on demand:
//
//	go test -tags record -run TestRecord -count=1 -v ./internal/attention
//
// (the harnesses are those `make harnesses` installs, as for the
// end-to-end tests). Every run rewrites its files: the goldens of
// golden_test.go follow them.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
)

const recordWait = 90 * time.Second

// writeHooks writes p: hooks for events that append each call to log.
func writeHooks(t *testing.T, p, log string, events []string) string {
	t.Helper()
	cmd := fmt.Sprintf(`t=$(mktemp); { printf '{"t_ms":%%s,"stdin":' "$(date +%%s%%3N)"; tr -d '\n'; printf '}\n'; } > "$t"; cat "$t" >> %q; rm -f "$t"`, log)
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// hookLines reads the recorded calls.
func hookLines(log string) []map[string]any {
	data, _ := os.ReadFile(log)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// countHook counts recorded calls of event (and notification_type, when
// given).
func countHook(log, event, ntype string) int {
	n := 0
	for _, l := range hookLines(log) {
		in, _ := l["stdin"].(map[string]any)
		if in["hook_event_name"] == event && (ntype == "" || in["notification_type"] == ntype) {
			n++
		}
	}
	return n
}

func waitHook(t *testing.T, term *testharness.Terminal, log, event, ntype string, n int) {
	t.Helper()
	deadline := time.Now().Add(recordWait)
	for countHook(log, event, ntype) < n {
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no %d× %s %s hook; hooks:\n%s\nscreen:\n%s", n, event, ntype, readFile(log), testharness.StripANSI(term.Output()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// answer types keys that answer a dialog and appends
// {"t_ms":<unix ms>,"key":name} to log, so a replay knows when the person
// answered.
func answer(t *testing.T, term *testharness.Terminal, log, name, keys string) {
	t.Helper()
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"t_ms\":%d,\"key\":%q}\n", time.Now().UnixMilli(), name)
	f.Close()
	term.Type(keys)
}

func readFile(p string) string { b, _ := os.ReadFile(p); return string(b) }

func keep(t *testing.T, src, name string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	out := recording(name)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(data))
}

func typePrompt(t *testing.T, term *testharness.Terminal, prompt string) {
	t.Helper()
	term.Type(prompt)
	if err := term.WaitFor(prompt, recordWait); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
}

// waitEvent waits for n bus events of type typ in log.
func waitEvent(t *testing.T, term *testharness.Terminal, log, typ string, n int) {
	t.Helper()
	count := func() int {
		k := 0
		for _, l := range hookLines(log) {
			if ev, _ := l["event"].(map[string]any); ev["type"] == typ {
				k++
			}
		}
		return k
	}
	deadline := time.Now().Add(recordWait)
	for count() < n {
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no %d× %s event; screen:\n%s", n, typ, testharness.StripANSI(term.Output()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func writeTestdata(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(recording(name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", name, len(data))
}
