package ptyio

import (
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestLastKey: a key typed at the person's terminal, held or not, sets
// LastKey; the terminal's replies to the harness's queries do not.
func TestLastKey(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano())
	in, w := stdinPipe(t)
	out := &testutil.SyncBuffer{}
	tm := openTerm(t, TerminalConfig{In: in, Out: out, Now: func() time.Time { return time.Unix(0, clock.Load()) }})
	start(t, tm, sh(t, "exec cat >/dev/null"))
	if k := tm.LastKey(); !k.IsZero() {
		t.Fatalf("LastKey %v before anything was typed, want zero", k)
	}

	if _, err := io.WriteString(w, "\x1b[12;40R"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return strings.Contains(out.String(), "[12;40R") }) // the PTY's echo
	if k := tm.LastKey(); !k.IsZero() {
		t.Fatalf("LastKey %v after a cursor position report, want zero", k)
	}

	typed := time.Unix(0, clock.Add(int64(time.Minute)))
	if _, err := io.WriteString(w, "a"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return strings.Contains(out.String(), "a") })
	if k := tm.LastKey(); !k.Equal(typed) {
		t.Fatalf("LastKey %v after a key, want %v", k, typed)
	}

	tm.HoldInput()
	held := time.Unix(0, clock.Add(int64(time.Minute)))
	if _, err := io.WriteString(w, "\x1b]11;rgb:0000/0000/0000\x07"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return strings.Contains(out.String(), "rgb:0000") }) // a report passes while held
	if k := tm.LastKey(); !k.Equal(typed) {
		t.Fatalf("LastKey %v after a report while held, want %v", k, typed)
	}
	if _, err := io.WriteString(w, "b"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return tm.LastKey().Equal(held) })
	tm.ReleaseInput()
}

func TestHasKey(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"", false},
		{"a", true},
		{"\x1b[?1;2c", false},
		{"\x1b[12;40R\x1b[?1u", false},
		{"\x1b[12;40Rx", true},
		{"\x1b[A", true}, // an arrow key
		{"\x1b", true},   // Escape
	} {
		if got := hasKey([]byte(tc.in)); got != tc.want {
			t.Errorf("hasKey(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
	p := []byte("\x1b[12;40Rtyped")
	if n := testing.AllocsPerRun(100, func() { _ = hasKey(p) }); n != 0 {
		t.Errorf("hasKey allocates %v times per read, want 0", n)
	}
}
