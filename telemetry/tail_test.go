package telemetry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitLimit bounds how long a test waits for an event before failing; it
// is a hang guard, not a timing assertion.
const waitLimit = 15 * time.Second

type tailRun struct {
	t   *testing.T
	ch  chan TailEvent
	got []TailEvent
}

func startTail(t *testing.T, cfg TailConfig) *tailRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &tailRun{t: t, ch: make(chan TailEvent, 1024)}
	done := make(chan error, 1)
	go func() {
		done <- Tail(ctx, cfg, func(ev TailEvent) {
			select {
			case r.ch <- ev:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Tail returned %v", err)
		}
	})
	return r
}

// until reads events until one satisfies ok, and returns it.
func (r *tailRun) until(desc string, ok func(TailEvent) bool) TailEvent {
	r.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case ev := <-r.ch:
			r.got = append(r.got, ev)
			if ok(ev) {
				return ev
			}
		case <-deadline:
			r.t.Fatalf("no %s event; saw %s", desc, describe(r.got))
		}
	}
}

func (r *tailRun) kind(k TailEventKind) TailEvent {
	r.t.Helper()
	return r.until(string(k), func(ev TailEvent) bool { return ev.Kind == k })
}

func (r *tailRun) line(text string) TailEvent {
	r.t.Helper()
	return r.until("line "+text, func(ev TailEvent) bool { return ev.Kind == EventLine && string(ev.Line) == text })
}

func describe(evs []TailEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "[%s %q off=%d no=%d] ", ev.Kind, ev.Line, ev.Offset, ev.LineNo)
	}
	return b.String()
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

var tailModes = []struct {
	name string
	cfg  TailConfig
	mode TailMode
}{
	{"fsnotify", TailConfig{Poll: 10 * time.Millisecond}, ModeNotify},
	{"poll", TailConfig{Poll: 10 * time.Millisecond, ForcePoll: true}, ModePoll},
}

func TestTail(t *testing.T) {
	scenarios := []struct {
		name string
		run  func(t *testing.T, r *tailRun, path string)
	}{
		{"partial line waits for its newline", func(t *testing.T, r *tailRun, path string) {
			appendFile(t, path, `{"a":1}`+"\n"+`{"b"`)
			r.line(`{"a":1}`)
			appendFile(t, path, ":2}\n")
			ev := r.line(`{"b":2}`)
			if ev.Offset != 8 || ev.LineNo != 2 {
				t.Errorf("second line at offset %d no %d, want 8, 2", ev.Offset, ev.LineNo)
			}
		}},
		{"garbage is reported as invalid", func(t *testing.T, r *tailRun, path string) {
			appendFile(t, path, "not json\n\x00\x01\xff\n{\"ok\":1}\n")
			var invalid int
			r.until("ok line", func(ev TailEvent) bool {
				if ev.Kind == EventInvalid {
					invalid++
				}
				return ev.Kind == EventLine
			})
			if invalid != 2 {
				t.Errorf("invalid lines = %d, want 2 (%s)", invalid, describe(r.got))
			}
		}},
		{"truncation restarts at zero", func(t *testing.T, r *tailRun, path string) {
			appendFile(t, path, `{"n":1}`+"\n"+`{"n":2}`+"\n")
			r.line(`{"n":2}`)
			if err := os.Truncate(path, 0); err != nil {
				t.Fatal(err)
			}
			appendFile(t, path, `{"n":3}`+"\n")
			r.kind(EventTruncated)
			ev := r.line(`{"n":3}`)
			if ev.Offset != 0 || ev.LineNo != 1 {
				t.Errorf("after truncation: offset %d no %d, want 0, 1", ev.Offset, ev.LineNo)
			}
		}},
		{"replacement restarts in the new file", func(t *testing.T, r *tailRun, path string) {
			appendFile(t, path, `{"old":1}`+"\n")
			r.line(`{"old":1}`)
			tmp := path + ".new"
			appendFile(t, tmp, `{"new":1}`+"\n"+`{"new":2}`+"\n")
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
			r.kind(EventReplaced)
			r.line(`{"new":1}`)
			ev := r.line(`{"new":2}`)
			if ev.LineNo != 2 || ev.Offset != 10 {
				t.Errorf("new file line 2 at offset %d no %d", ev.Offset, ev.LineNo)
			}
		}},
		{"deletion then re-creation", func(t *testing.T, r *tailRun, path string) {
			appendFile(t, path, `{"x":1}`+"\n")
			r.line(`{"x":1}`)
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			r.kind(EventDeleted)
			appendFile(t, path, `{"y":1}`+"\n")
			r.kind(EventAppeared)
			r.line(`{"y":1}`)
		}},
		{"over-long lines are skipped and counted", func(t *testing.T, r *tailRun, path string) {
			appendFile(t, path, `{"long":"`+strings.Repeat("x", 100)+`"}`+"\n"+`{"s":1}`+"\n")
			ev := r.kind(EventOverlong)
			if ev.Offset != 0 || ev.Size <= 32 {
				t.Errorf("overlong at %d size %d", ev.Offset, ev.Size)
			}
			ev = r.line(`{"s":1}`)
			if ev.LineNo != 2 {
				t.Errorf("line after overlong has number %d, want 2", ev.LineNo)
			}
		}},
	}
	for _, m := range tailModes {
		for _, sc := range scenarios {
			t.Run(m.name+"/"+sc.name, func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "t.jsonl")
				cfg := m.cfg
				cfg.Path, cfg.MaxLine = path, 32
				r := startTail(t, cfg)
				if ev := r.kind(EventMode); ev.Mode != m.mode {
					t.Fatalf("mode %s, want %s", ev.Mode, m.mode)
				}
				sc.run(t, r, path)
			})
		}
	}
}

func TestTailStartPosition(t *testing.T) {
	tests := []struct {
		name      string
		existing  string
		fromStart bool
		want      string // first line expected after appending {"new":1}
	}{
		{"from start reads existing lines", `{"old":1}` + "\n", true, `{"old":1}`},
		{"from end skips existing lines", `{"old":1}` + "\n", false, `{"new":1}`},
		{"from end skips a partial last line", `{"old":1}` + "\n" + `{"part`, false, `{"new":1}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl")
			appendFile(t, path, tc.existing)
			r := startTail(t, TailConfig{Path: path, FromStart: tc.fromStart, Poll: 10 * time.Millisecond, ForcePoll: true})
			r.kind(EventMode)
			tail := `{"new":1}` + "\n"
			if strings.HasSuffix(tc.existing, "rt") {
				tail = `":1}` + "\n" + tail
			}
			appendFile(t, path, tail)
			ev := r.until("first line", func(ev TailEvent) bool { return ev.Kind == EventLine || ev.Kind == EventInvalid })
			if string(ev.Line) != tc.want {
				t.Errorf("first line %q, want %q (%s)", ev.Line, tc.want, describe(r.got))
			}
		})
	}
}

func TestTailAppearsLater(t *testing.T) {
	for _, m := range tailModes {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "later.jsonl")
			cfg := m.cfg
			cfg.Path = path
			r := startTail(t, cfg)
			r.kind(EventMode)
			appendFile(t, path, `{"hello":1}`+"\n")
			r.kind(EventAppeared)
			r.line(`{"hello":1}`)
		})
	}
}

func TestTailRejectsEmptyPath(t *testing.T) {
	if err := Tail(context.Background(), TailConfig{}, func(TailEvent) {}); err == nil {
		t.Fatal("Tail with no path returned nil")
	}
}
