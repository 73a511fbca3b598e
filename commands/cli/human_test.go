package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
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

// A live session's block says so and shows the wrapper's activity.
func TestStatusHumanLive(t *testing.T) {
	start := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	now := start.Add(95 * time.Second)
	s := sessionview.Summary{ID: "ses_X", Harness: "codex", State: "running", Pid: 9, Started: &start,
		Live: true, Activity: "idle", Idle: 40 * time.Second, Cwd: "/home/ann/app"}
	left := 8.6
	s.SetLive(control.Status{Activity: "idle", IdleSeconds: 40, Holding: []control.Hold{{
		Event: contract.EventSessionStarted, Reason: "waiting for the relaunched harness to name its session", SecondsLeft: &left}}})
	var b strings.Builder
	if err := writeStatusHuman(&b, s, nil, now, "/home/ann", painter{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"state      running (live)\n",
		"holding    session.started held: waiting for the relaunched harness to name its session, 9 s left\n", "uptime     1m35s (since ", "activity   idle, no output for 40s\n", "last frame -\n", "pressure   -\n", "renewal    none\n", "cwd        ~/app\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status block lacks %q:\n%s", want, b.String())
		}
	}
}

// The block of a session whose harness outlived its wrapper names the
// orphans, and the harness's version and drift sit in its own columns.
func TestStatusHumanHarnessFactsAndOrphans(t *testing.T) {
	start := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	s := sessionview.Summary{ID: "ses_X", Harness: "codex", State: "lost", Terminal: true, Started: &start,
		HarnessVersion: "0.9.1", Drift: []string{"telemetry synthesized → partial: no usage"}}
	var b strings.Builder
	if err := writeStatusHuman(&b, s, []int{41, 42}, start.Add(time.Minute), "", painter{}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"state      lost\norphan     the harness still runs without its wrapper: pids [41 42]; stop it with `lifeloop abort ses_X`\n",
		"harness    codex version 0.9.1\ndrift      telemetry synthesized → partial: no usage\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status block lacks %q:\n%s", want, got)
		}
	}
	if strings.Count(got, "\nharness ") != 1 {
		t.Errorf("harness told twice:\n%s", got)
	}
}
