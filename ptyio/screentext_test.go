package ptyio

import (
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestScreenTextMatches: texts are found as a person reads them (escapes
// and whitespace skipped, split across reads), each reported once until a
// key is typed, and after a key only in output read since.
func TestScreenTextMatches(t *testing.T) {
	const dialog = "Do you want to proceed?"
	tests := []struct {
		name   string
		chunks []string
		keys   []int64 // the last key before each chunk
		want   [][]int // the texts each chunk completes
	}{
		{"plain", []string{"Do you want to proceed?"}, []int64{0}, [][]int{{0}}},
		{"split, cursor moves, colours", []string{"\x1b[1mDo\x1b[1Cyou want to pro", "\x1b[38;5;8mceed?\x1b[0m"}, []int64{0, 0}, [][]int{nil, {0}}},
		{"inside a title", []string{"\x1b]0;Do you want to proceed?\x07"}, []int64{0}, [][]int{nil}},
		{"repainted", []string{dialog, "\x1b[2J" + dialog, dialog}, []int64{0, 0, 0}, [][]int{{0}, nil, nil}},
		{"drawn again after a key", []string{dialog, dialog, dialog}, []int64{0, 5, 5}, [][]int{{0}, {0}, nil}},
		{"half drawn before the key", []string{"Do you want", " to proceed?"}, []int64{0, 5}, [][]int{nil, nil}},
		{"second text", []string{"Allow once", "Do you want to proceed?"}, []int64{0, 0}, [][]int{{1}, {0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newScreenText(&ScreenWatch{Texts: []string{dialog, "Allow once", ""}, Seen: func(int, time.Time) {}})
			for i, c := range tc.chunks {
				got := slices.Clone(m.feed([]byte(c), tc.keys[i]))
				if !slices.Equal(got, tc.want[i]) {
					t.Fatalf("chunk %d %q: found %v, want %v", i, c, got, tc.want[i])
				}
			}
		})
	}
	if newScreenText(&ScreenWatch{Texts: []string{" "}, Seen: func(int, time.Time) {}}) != nil {
		t.Error("blank texts make a matcher")
	}
	if newScreenText(nil) != nil {
		t.Error("no watch makes a matcher")
	}
}

// FuzzScreenText: where the output is cut between reads does not change
// what is found.
func FuzzScreenText(f *testing.F) {
	f.Add([]byte("\x1b[2JDo you\x1b[1Cwant to proceed?"), 7)
	f.Fuzz(func(t *testing.T, out []byte, cut int) {
		w := &ScreenWatch{Texts: []string{"Do you want to proceed?", "Allow"}, Seen: func(int, time.Time) {}}
		if cut < 0 || cut > len(out) {
			cut = len(out) / 2
		}
		whole := slices.Clone(newScreenText(w).feed(out, 0))
		m := newScreenText(w)
		split := slices.Concat(m.feed(out[:cut], 0), nil)
		split = append(split, m.feed(out[cut:], 0)...)
		slices.Sort(whole)
		slices.Sort(split)
		if !slices.Equal(whole, split) {
			t.Errorf("split at %d: %v, whole: %v", cut, split, whole)
		}
	})
}

// TestScreenWatchOnChild: a child that draws a dialog, repaints it, and
// draws it again after a key typed at the Terminal is reported twice,
// after its output reached Out.
func TestScreenWatchOnChild(t *testing.T) {
	in, w := stdinPipe(t)
	out := &testutil.SyncBuffer{}
	tm := openTerm(t, TerminalConfig{In: in, Out: out})
	var mu sync.Mutex
	var seen []time.Time
	var outAtSeen []string
	spec := sh(t, `d='\033[1mDo you\033[1Cwant to proceed?\033[0m'; printf "$d\r\n"; printf "\033[2J$d\r\n"; printf 'FIRST\r\n'; read x; printf "$d\r\n"; read y`)
	spec.Screen = &ScreenWatch{Texts: []string{"Do you want to proceed?"}, Seen: func(i int, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, at)
		outAtSeen = append(outAtSeen, out.String())
	}}
	c := start(t, tm, spec)
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	testutil.WaitFor(t, func() bool { return strings.Contains(out.String(), "FIRST") && count() == 1 })
	if _, err := io.WriteString(w, "y\n"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return count() == 2 })
	if _, err := io.WriteString(w, "z\n"); err != nil {
		t.Fatal(err)
	}
	if st := wait(t, c); st.ExitCode() != 0 {
		t.Fatalf("child: %v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("reported %d times, want 2 (drawn, repainted, drawn after a key)", len(seen))
	}
	for i, o := range outAtSeen {
		if !strings.Contains(o, "proceed?") || seen[i].IsZero() {
			t.Errorf("report %d at %v before its text reached Out (%q)", i, seen[i], o)
		}
	}
}

// BenchmarkScreenText: the matcher's cost on a TUI's output, per 4 KiB
// read (a repaint of coloured lines, the dialog's text in the last one),
// with three texts to look for.
func BenchmarkScreenText(b *testing.B) {
	var frame strings.Builder
	for frame.Len() < 4<<10-100 {
		frame.WriteString("\x1b[2K\x1b[38;5;246m  ⎿  Running tool call\x1b[1C with some\x1b[1Coutput \x1b[0m\r\n")
	}
	frame.WriteString("\x1b[1m Do you want to proceed?\x1b[0m\r\n ❯ 1. Yes")
	chunk := []byte(frame.String())
	m := newScreenText(&ScreenWatch{Texts: []string{"Do you want to proceed?", "Allow execution of", "Permission required"}, Seen: func(int, time.Time) {}})
	b.SetBytes(int64(len(chunk)))
	key := int64(0)
	for b.Loop() {
		key++ // a key before every chunk: each one is matched anew
		if len(m.feed(chunk, key)) != 1 {
			b.Fatal("the dialog was not found")
		}
	}
}
