package testharness

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// stripTokens are the pieces the streams of TestStripperMatchesStripANSI
// are made of: text, line ends, and the escape sequences terminal
// programs write (complete, as they write them), with a few stray and
// incomplete ones.
var stripTokens = []string{
	"hello", "ready | idle", " ", "word", "ünï", "\r", "\n", "\r\n", "\t", "\x07", "\x7f",
	"\x1b[K", "\x1b[2J", "\x1b[38;2;10;20;30m", "\x1b[0m", "\x1b[5C", "\x1b[C", "\x1b[12G", "\x1b[3;1H", "\x1b[H", "\x1b[2;5f",
	"\x1b[?25l", "\x1b[?2004h", "\x1b[6n", "\x1b[>4;1m",
	"\x1b]0;title\x07", "\x1b]8;;http://x\x1b\\", "\x1bPq#0\x1b\\", "\x1b_payload\x1b\\",
	"\x1b(B", "\x1b)0", "\x1b=", "\x1b>", "\x1b7", "\x1b8", "\x1bM",
	"\x1b", "\x1b[", "\x1b]open", "\x1b(",
	// The pieces that make a cut unsafe, more often.
	"\x1b]open", "\x1b]open", "\x07", "\x07", "\n", "\n", "\r", "\x1b(", "\x1b", "\x1bP", "\x1b\\",
}

// TestStripperMatchesStripANSI: however a stream arrives, in chunks of
// any size, the stripper's text is StripANSI of all the stream so far
// (the part it keeps is never stripped again, so a wrong cut shows at the
// end of the stream).
func TestStripperMatchesStripANSI(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	cuts := 0
	for round := range 200 {
		var b strings.Builder
		for b.Len() < 3*minCut {
			b.WriteString(stripTokens[rng.IntN(len(stripTokens))])
		}
		stream := []byte(b.String())
		var s stripper
		var got string
		for at := 0; at < len(stream); {
			at = min(len(stream), at+1+rng.IntN(2*minCut))
			got = s.String(stream[:at])
		}
		if want := StripANSI(string(stream)); got != want {
			t.Fatalf("round %d: the stripper's text differs from StripANSI at byte %d", round, firstDiff(got, want))
		}
		if s.at > 0 {
			cuts++
		}
	}
	if cuts < 100 {
		t.Errorf("the stripper cut in %d streams of 200", cuts)
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestSqueeze: squeeze removes what `\s` matches, nothing else.
func TestSqueeze(t *testing.T) {
	if got := squeeze("a \tb\nc\r\fd\ve\u00a0f"); got != "abcd\ve\u00a0f" {
		t.Errorf("squeeze = %q", got)
	}
}
