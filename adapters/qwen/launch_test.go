package qwen

import (
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

const uuid = "11111111-2222-4333-8444-555555555555"

func TestPinSession(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		pin  bool
	}{
		{[]string{"qwen"}, true},
		{[]string{"qwen", "--yolo", "say hi"}, true},
		{[]string{"qwen", "-i", "hello"}, true},
		{[]string{"qwen", "--resume", uuid}, false},
		{[]string{"qwen", "-c"}, false},
		{[]string{"qwen", "--session-id", uuid}, false},
		{[]string{"qwen", "--version"}, false},
		{[]string{"qwen", "mcp", "list"}, false},
	} {
		got, id := Harness{}.PinSession(tt.argv, 1)
		if !tt.pin {
			if id != "" || !slices.Equal(got, tt.argv) {
				t.Errorf("PinSession(%q) = %q, %q; want it unchanged", tt.argv, got, id)
			}
			continue
		}
		if !adapters.IsUUID(id) || !slices.Equal(got[:3], []string{"qwen", sessionIDFlag, id}) || !slices.Equal(got[3:], tt.argv[1:]) {
			t.Errorf("PinSession(%q) = %q, %q", tt.argv, got, id)
		}
	}
}

func TestResumedSession(t *testing.T) {
	for _, tt := range []struct {
		argv    []string
		id      string
		resumed bool
	}{
		{[]string{"qwen", "--resume", uuid}, uuid, true},
		{[]string{"qwen", "-r", uuid, "--yolo"}, uuid, true},
		{[]string{"qwen", "--continue"}, "", true},
		{[]string{"qwen", "--resume"}, "", false},
		{[]string{"qwen", "--resume", uuid, "--fork-session"}, "", false},
		{[]string{"qwen", "say hi"}, "", false},
	} {
		id, ok := Harness{}.ResumedSession(tt.argv, 1)
		if id != tt.id || ok != tt.resumed {
			t.Errorf("ResumedSession(%q) = %q, %v; want %q, %v", tt.argv, id, ok, tt.id, tt.resumed)
		}
	}
}

func TestRelaunchArgv(t *testing.T) {
	argv := []string{"lifeloop-env", "qwen", "--session-id", uuid, "-i", "first", "--yolo"}
	got, ok := Harness{}.RelaunchArgv(argv, 2, uuid, true)
	if want := []string{"lifeloop-env", "qwen", resumeFlag, uuid, "--yolo"}; !ok || !slices.Equal(got, want) {
		t.Errorf("resume = %q, %v; want %q", got, ok, want)
	}
	got, ok = Harness{}.RelaunchArgv(argv, 2, "", false)
	if want := []string{"lifeloop-env", "qwen", "-i", "first", "--yolo"}; !ok || !slices.Equal(got, want) {
		t.Errorf("fresh = %q, %v; want %q", got, ok, want)
	}
	if _, ok := (Harness{}).RelaunchArgv([]string{"qwen", "--help"}, 1, uuid, true); ok {
		t.Error("relaunched a command line that starts no session")
	}
}

func TestPlaceAtLaunch(t *testing.T) {
	got, class, ok := Harness{}.PlaceAtLaunch([]string{"qwen", "--yolo"}, 1, "NOTE")
	if want := []string{"qwen", appendPromptFlag, "NOTE", "--yolo"}; !ok || class != "pre_session" || !slices.Equal(got, want) {
		t.Errorf("PlaceAtLaunch = %q, %q, %v; want %q", got, class, ok, want)
	}
	got, _, _ = Harness{}.PlaceAtLaunch([]string{"qwen", appendPromptFlag + "=mine"}, 1, "NOTE")
	if want := []string{"qwen", appendPromptFlag + "=NOTE\n\nmine"}; !slices.Equal(got, want) {
		t.Errorf("with the launch's own value: %q, want %q", got, want)
	}
	if _, _, ok := (Harness{}).PlaceAtLaunch([]string{"qwen", "mcp", "list"}, 1, "NOTE"); ok {
		t.Error("placed into a command line that starts no session")
	}
	// The body is in argv: the registry refuses it unless the session
	// opted in.
	a := adapters.AdapterOf(Harness{})
	if _, _, ok := a.PlaceAtLaunch([]string{"qwen"}, "NOTE"); ok {
		t.Error("Adapter.PlaceAtLaunch placed a body in argv without --payload-argv-ok")
	}
	if _, _, ok := a.WithArgvPayloads().PlaceAtLaunch([]string{"qwen"}, "NOTE"); !ok {
		t.Error("WithArgvPayloads refused the placement")
	}
}
