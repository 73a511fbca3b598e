package openclaw

import (
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// TestRelaunchArgv: the local TUI relaunches on the same session key
// without its launch message (resume) or on a new key with it (fresh);
// other command lines have no relaunch path; argv is never modified.
func TestRelaunchArgv(t *testing.T) {
	h := Harness{}
	if h.StopSignal() != syscall.SIGTERM {
		t.Error("stop signal")
	}
	tests := []struct {
		argv   []string
		resume bool
		want   []string
		ok     bool
	}{
		{[]string{"openclaw", "chat"}, true, []string{"openclaw", "chat"}, true},
		{[]string{"openclaw", "chat", "--session", "k", "--message", "hi"}, true, []string{"openclaw", "chat", "--session", "k"}, true},
		{[]string{"openclaw", "--profile", "p", "tui", "--local", "--message=hi"}, true, []string{"openclaw", "--profile", "p", "tui", "--local"}, true},
		{[]string{"openclaw", "chat", "--session=k", "--message", "hi"}, false, []string{"openclaw", "chat", "--message", "hi", "--session", "lifeloop-"}, true},
		{[]string{"openclaw", "chat", "--session", "k"}, false, []string{"openclaw", "chat", "--session", "lifeloop-"}, true},
		{[]string{"openclaw", "tui"}, true, nil, false},
		{[]string{"openclaw", "agent", "--local", "-m", "hi"}, true, nil, false},
		{[]string{"openclaw", "chat", "--help"}, false, nil, false},
	}
	for _, tt := range tests {
		argv := slices.Clone(tt.argv)
		got, ok := h.RelaunchArgv(argv, 1, "sid", tt.resume)
		if !tt.ok {
			tt.want = tt.argv
		}
		if ok != tt.ok || len(got) != len(tt.want) {
			t.Errorf("RelaunchArgv(%q, resume %v) = %q %v, want %q %v", tt.argv, tt.resume, got, ok, tt.want, tt.ok)
			continue
		}
		for i := range got {
			prefix := strings.HasSuffix(tt.want[i], "-") && strings.HasPrefix(got[i], tt.want[i]) && len(got[i]) > len(tt.want[i])
			if got[i] != tt.want[i] && !prefix {
				t.Errorf("RelaunchArgv(%q, resume %v) = %q, want %q", tt.argv, tt.resume, got, tt.want)
				break
			}
		}
		if !slices.Equal(argv, tt.argv) {
			t.Errorf("argv modified: %q", argv)
		}
	}
	if _, ok := h.RelaunchArgv([]string{"openclaw", "chat"}, 1, "", true); ok {
		t.Error("resume without a session id")
	}
}

// TestCommand: global options (with their values) come before the
// command.
func TestCommand(t *testing.T) {
	for _, c := range []struct {
		args       []string
		global     int
		cmd        string
		localAgent bool
	}{
		{[]string{"agent", "--local", "-m", "x"}, 0, "agent", true},
		{[]string{"--log-level", "debug", "--no-color", "agent", "--local"}, 3, "agent", true},
		{[]string{"--dev", "agent", "--local=true"}, 1, "agent", true},
		{[]string{"agent", "exec", "--local"}, 0, "agent", false},
		{[]string{"agent", "-m", "x"}, 0, "agent", false},
		{[]string{"chat", "--local"}, 0, "chat", false},
		{[]string{"--profile", "p"}, 2, "", false},
	} {
		global, cmd, _ := command(c.args)
		if len(global) != c.global || cmd != c.cmd || isLocalAgent(c.args) != c.localAgent {
			t.Errorf("command(%q) = %q, %q; isLocalAgent %v", c.args, global, cmd, isLocalAgent(c.args))
		}
	}
}

// TestPlaceAtLaunch: the local TUI takes the text first in its launch
// message (pre_frame_leading), which has no file form, so the adapter
// refuses it unless argv payloads were allowed; other command lines take
// none; argv is never modified.
func TestPlaceAtLaunch(t *testing.T) {
	h := Harness{}
	tests := []struct {
		argv, want []string
		ok         bool
	}{
		{[]string{"openclaw", "chat"}, []string{"openclaw", "chat", "--message", "T"}, true},
		{[]string{"openclaw", "chat", "--message", "hi"}, []string{"openclaw", "chat", "--message", "T\n\nhi"}, true},
		{[]string{"openclaw", "tui", "--local", "--message=hi"}, []string{"openclaw", "tui", "--local", "--message=T\n\nhi"}, true},
		{[]string{"openclaw", "tui"}, nil, false},
		{[]string{"openclaw", "agent", "--local", "-m", "hi"}, nil, false},
		{[]string{"openclaw", "chat", "--help"}, nil, false},
	}
	for _, tt := range tests {
		argv := slices.Clone(tt.argv)
		got, target, ok := h.PlaceAtLaunch(argv, 1, "T")
		if !tt.ok {
			tt.want = tt.argv
		}
		if ok != tt.ok || !slices.Equal(got, tt.want) || (ok && target != contract.ManifestPreFrameLeading) {
			t.Errorf("PlaceAtLaunch(%q) = %q %q %v, want %q %v", tt.argv, got, target, ok, tt.want, tt.ok)
		}
		if !slices.Equal(argv, tt.argv) {
			t.Errorf("argv modified: %q", argv)
		}
	}
	ad := adapters.AdapterOf(h)
	argv := []string{"openclaw", "chat"}
	if _, _, ok := ad.PlaceAtLaunch(argv, "T"); ok {
		t.Error("the body in argv was placed without the opt-in")
	}
	if err := ad.ArgvPlacementError(argv, ""); !errors.Is(err, adapters.ErrPayloadInArgv) {
		t.Errorf("ArgvPlacementError = %v", err)
	}
	if _, _, ok := ad.WithArgvPayloads().PlaceAtLaunch(argv, "T"); !ok {
		t.Error("not placed with the opt-in")
	}
}
