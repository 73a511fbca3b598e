package telemetry

import (
	"bytes"
	"fmt"
	"testing"
)

type splitRec struct {
	line     string
	off      int64
	overlong bool
	n        int64
}

func splitAll(max int, chunks [][]byte) []splitRec {
	s := splitter{max: max}
	var out []splitRec
	var off int64
	for _, c := range chunks {
		s.feed(c, off, func(line []byte, o int64, overlong bool, n int64) {
			out = append(out, splitRec{string(line), o, overlong, n})
		})
		off += int64(len(c))
	}
	return out
}

func TestSplitter(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		chunks []string
		want   []splitRec
	}{
		{"one line", 10, []string{"abc\n"}, []splitRec{{"abc", 0, false, 3}}},
		{"partial waits", 10, []string{"ab", "c"}, nil},
		{"partial completes", 10, []string{"ab", "c\nde\n"}, []splitRec{{"abc", 0, false, 3}, {"de", 4, false, 2}}},
		{"crlf", 10, []string{"ab\r\n"}, []splitRec{{"ab", 0, false, 2}}},
		{"empty lines", 10, []string{"\n\nx\n"}, []splitRec{{"", 0, false, 0}, {"", 1, false, 0}, {"x", 2, false, 1}}},
		{"exactly max", 3, []string{"abc\n"}, []splitRec{{"abc", 0, false, 3}}},
		{"overlong in one chunk", 3, []string{"abcd\nok\n"}, []splitRec{{"", 0, true, 4}, {"ok", 5, false, 2}}},
		{"overlong across chunks", 3, []string{"ab", "cd", "efgh", "ij\nz\n"}, []splitRec{{"", 0, true, 4}, {"z", 11, false, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var chunks [][]byte
			for _, c := range tc.chunks {
				chunks = append(chunks, []byte(c))
			}
			got := splitAll(tc.max, chunks)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v\nwant %v", got, tc.want)
			}
		})
	}
}

func TestSplitterBoundedMemory(t *testing.T) {
	s := splitter{max: 16}
	big := bytes.Repeat([]byte("x"), 1<<20)
	var over int
	for range 8 {
		s.feed(big, 0, func(_ []byte, _ int64, overlong bool, _ int64) {
			if overlong {
				over++
			}
		})
		if s.pending() > 16 || cap(s.buf) > 64 {
			t.Fatalf("buffer grew to len %d cap %d with max 16", s.pending(), cap(s.buf))
		}
	}
	if over != 1 {
		t.Errorf("over-long reported %d times, want once per line", over)
	}
}

// FuzzSplitter checks that any chunking of the input yields the same lines
// as feeding it at once, and that no kept line is longer than max.
func FuzzSplitter(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n{\"b\"\n\n"), uint8(3), uint8(5))
	f.Add([]byte("xxxxxxxxxxxxxxxx\nyy\r\n"), uint8(1), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, step, max uint8) {
		m := int(max%32) + 1
		whole := splitAll(m, [][]byte{data})
		st := int(step%7) + 1
		var chunks [][]byte
		for i := 0; i < len(data); i += st {
			chunks = append(chunks, data[i:min(i+st, len(data))])
		}
		parts := splitAll(m, chunks)
		// The size of an over-long line is "bytes seen when the limit was
		// passed", which depends on chunking; everything else must not.
		for _, rs := range [][]splitRec{whole, parts} {
			for i := range rs {
				if rs[i].overlong {
					if rs[i].n <= int64(m) {
						t.Fatalf("over-long line reported with %d bytes, max %d", rs[i].n, m)
					}
					rs[i].n = 0
				}
			}
		}
		if fmt.Sprint(whole) != fmt.Sprint(parts) {
			t.Fatalf("chunked %v != whole %v", parts, whole)
		}
		for _, r := range whole {
			if !r.overlong && len(r.line) > m {
				t.Fatalf("kept a %d-byte line with max %d", len(r.line), m)
			}
		}
	})
}
