package topview

import (
	"testing"
)

// TestColourFor: colour only on a terminal with a TERM other than dumb;
// NO_COLOR keeps the attributes; 256 colours where TERM or COLORTERM
// says so.
func TestColourFor(t *testing.T) {
	for _, c := range []struct {
		terminal bool
		env      map[string]string
		want     Colour
	}{
		{false, map[string]string{"TERM": "xterm-256color"}, Plain},
		{true, map[string]string{}, Plain},
		{true, map[string]string{"TERM": "dumb"}, Plain},
		{true, map[string]string{"TERM": "xterm-256color", "NO_COLOR": "1"}, Attributes},
		{true, map[string]string{"TERM": "xterm"}, Colours16},
		{true, map[string]string{"TERM": "xterm", "COLORTERM": "truecolor"}, Colours256},
		{true, map[string]string{"TERM": "xterm-256color"}, Colours256},
		{true, map[string]string{"TERM": "screen"}, Colours256},
	} {
		if got := ColourFor(c.terminal, func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("ColourFor(%v, %v) = %v, want %v", c.terminal, c.env, got, c.want)
		}
	}
}

// TestStyleRender: the styles as Lip Gloss writes them with every
// colour, and taken down as the output takes them.
func TestStyleRender(t *testing.T) {
	high, critical := styleLevel["high"], styleLevel["critical"]
	for _, c := range []struct {
		got, want string
	}{
		{StyleHeader.Render("t", Colours256), "\x1b[1mt\x1b[m"},
		{high.Render("h", Colours256), "\x1b[38;5;208mh\x1b[m"},
		{high.Render("h", Colours16), "\x1b[91mh\x1b[m"},
		{high.Render("h", Attributes), "h"},
		{critical.Render("c", Colours256), "\x1b[1;31mc\x1b[m"},
		{critical.Render("c", Attributes), "\x1b[1mc\x1b[m"},
		{StyleEnded.Render("e", Plain), "e"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

// TestFitCountsCells: wide characters take two cells, marks none; a cut
// ends with "…" and never splits a wide character.
func TestFitCountsCells(t *testing.T) {
	for _, c := range []struct {
		in   string
		w    int
		want string
	}{
		{"abc", 5, "abc  "},
		{"abcdef", 4, "abc…"},
		{"日本語", 6, "日本語"},
		{"日本語", 5, "日本…"},
		{"日本語", 4, "日… "},
		{"e\u0301t\u00e9", 3, "e\u0301té"},
		{"█░", 2, "█░"},
	} {
		got := Fit(c.in, c.w)
		if got != c.want || Width(got) != c.w {
			t.Errorf("Fit(%q, %d) = %q (%d cells), want %q", c.in, c.w, got, Width(got), c.want)
		}
	}
	if got := TruncateLeft("/home/dev/src", 5, "…"); got != "…/dev/src" {
		t.Errorf("TruncateLeft = %q", got)
	}
}
