package cli

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second: "0s", 0: "0s", 45 * time.Second: "45s", 12*time.Minute + 3*time.Second: "12m03s",
		3*time.Hour + 4*time.Minute + 59*time.Second: "3h04m", 53 * time.Hour: "2d05h",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestShortPath(t *testing.T) {
	for _, tt := range []struct{ in, home, want string }{
		{"/home/ann/src/app", "/home/ann", "~/src/app"},
		{"/home/ann", "/home/ann", "~"},
		{"/home/anna/x", "/home/ann", "/home/anna/x"},
		{"", "/home/ann", "-"},
		{"/a/very/long/path/to/some/project", "", "…o/some/project"},
	} {
		if got := shortPath(tt.in, tt.home, 15); got != tt.want {
			t.Errorf("shortPath(%q, %q) = %q, want %q", tt.in, tt.home, got, tt.want)
		}
	}
}

func TestPainterOff(t *testing.T) {
	e := &env{Streams: Streams{OutTerminal: true, Getenv: getenvIn([]string{"NO_COLOR=1"})}}
	if p := e.painter(); p.on || p.status("failed") != "failed" {
		t.Errorf("NO_COLOR set: painter on")
	}
	e.Getenv = getenvIn(nil)
	if p := e.painter(); !p.on || p.status("failed") != "\x1b[31mfailed\x1b[0m" || p.status("lost-in-space") != "lost-in-space" {
		t.Errorf("terminal without NO_COLOR: %+v", p)
	}
	e.OutTerminal = false
	if e.painter().on {
		t.Errorf("not a terminal: painter on")
	}
}
