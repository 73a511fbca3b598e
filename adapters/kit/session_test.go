package kit

import (
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// testSession is a command line of the usual shape: -p/-i take a
// prompt, --resume/--session-id choose the session, --version and the
// subcommand "mcp" start none.
var testSession = SessionOptions{
	Args: func(args []string) []adapters.Arg {
		return adapters.ScanArgs(args, func(name string) adapters.Arity {
			switch name {
			case "-p", "-i", "--session-id":
				return adapters.Required
			case "--resume":
				return adapters.Optional
			}
			return adapters.FlagOnly
		})
	},
	Starts: func(args []string) bool {
		return len(args) == 0 || (args[0] != "mcp" && !slices.Contains(args, "--version"))
	},
	Picks:   func(option string) bool { return option == "--resume" || option == "--session-id" },
	PinFlag: "--session-id",
	Resume:  func(id string) []string { return []string{"--resume=" + id} },
	Sent:    func(ca adapters.Arg) bool { return ca.Option == "-i" },
}

func TestSessionOptionsPin(t *testing.T) {
	for _, tt := range []struct {
		argv  []string
		start int
		pin   bool
	}{
		{[]string{"h"}, 1, true},
		{[]string{"env", "h", "-i", "hello", "--yolo"}, 2, true},
		{[]string{"h", "--resume", "x"}, 1, false},
		{[]string{"h", "--session-id", "x"}, 1, false},
		{[]string{"h", "--version"}, 1, false},
		{[]string{"h", "mcp"}, 1, false},
		{[]string{"h"}, 0, false},
		{[]string{"h"}, 2, false},
	} {
		got, id := testSession.Pin(tt.argv, tt.start)
		if !tt.pin {
			if id != "" || !slices.Equal(got, tt.argv) {
				t.Errorf("Pin(%q, %d) = %q, %q; want it unchanged", tt.argv, tt.start, got, id)
			}
			continue
		}
		want := slices.Concat(tt.argv[:tt.start], []string{"--session-id", id}, tt.argv[tt.start:])
		if !adapters.IsUUID(id) || !slices.Equal(got, want) {
			t.Errorf("Pin(%q, %d) = %q, %q", tt.argv, tt.start, got, id)
		}
	}
	argv := []string{"h", "-p", "x"}
	if testSession.Pin(argv, 1); !slices.Equal(argv, []string{"h", "-p", "x"}) {
		t.Errorf("Pin modified its argv: %q", argv)
	}
}

func TestSessionOptionsRelaunch(t *testing.T) {
	const id = "11111111-2222-4333-8444-555555555555"
	argv := []string{"env", "h", "--session-id", id, "-i", "first", "--yolo"}
	keep := slices.Clone(argv)
	got, ok := testSession.Relaunch(argv, 2, id, true)
	if want := []string{"env", "h", "--resume=" + id, "--yolo"}; !ok || !slices.Equal(got, want) {
		t.Errorf("resume = %q, %v; want %q", got, ok, want)
	}
	got, ok = testSession.Relaunch(argv, 2, "", false)
	if want := []string{"env", "h", "-i", "first", "--yolo"}; !ok || !slices.Equal(got, want) {
		t.Errorf("fresh = %q, %v; want %q", got, ok, want)
	}
	if !slices.Equal(argv, keep) {
		t.Errorf("Relaunch modified its argv: %q", argv)
	}
	for _, tt := range []struct {
		argv   []string
		start  int
		id     string
		resume bool
	}{
		{[]string{"h", "--version"}, 1, id, true},
		{[]string{"h"}, 1, "", true},
		{[]string{"h"}, 0, id, true},
		{[]string{"h"}, 2, "", false},
	} {
		if got, ok := testSession.Relaunch(tt.argv, tt.start, tt.id, tt.resume); ok || !slices.Equal(got, tt.argv) {
			t.Errorf("Relaunch(%q, %d, %q, %v) = %q, %v; want a copy, false", tt.argv, tt.start, tt.id, tt.resume, got, ok)
		}
	}
}
