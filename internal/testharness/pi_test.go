package testharness

import "testing"

// TestStartAfter: the relaunch wait finds the new Pi's start, not the old
// Pi's start or its redraw (banner and footer again) when it stops.
func TestStartAfter(t *testing.T) {
	const (
		start  = "\x1b[?2004h"
		screen = "\x1b[2J\x1b[Hbanner\x1b[1;1Hfooter " + piReady
		stop   = "\x1b[?2004l"
	)
	first := start + screen
	before := len(StripANSI(first))
	redraw := first + screen + stop
	if at, ok := startAfter([]byte(redraw), piStarts, before); ok {
		t.Fatalf("found a start at %d in the old Pi's redraw", at)
	}
	relaunched := redraw + "\r\n" + start + screen
	at, ok := startAfter([]byte(relaunched), piStarts, before)
	if want := len(StripANSI(redraw + "\r\n")); !ok || at != want {
		t.Fatalf("start at %d, %v; want %d", at, ok, want)
	}
	if got := StripANSI(relaunched)[at:]; got != StripANSI(screen) {
		t.Errorf("the output after the start is %q, want the new screen %q", got, StripANSI(screen))
	}
}
