package gemini

import (
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

func TestPlaceAtLaunch(t *testing.T) {
	const text = "ENVELOPE"
	for _, tt := range []struct {
		argv, want []string
		ok         bool
	}{
		{[]string{"gemini"}, []string{"gemini", "-i", text}, true},
		{[]string{"gemini", "-m", "x"}, []string{"gemini", "-i", text, "-m", "x"}, true},
		{[]string{"gemini", "-p", "hi"}, []string{"gemini", "-p", text + "\n\nhi"}, true},
		{[]string{"gemini", "--prompt=hi", "-y"}, []string{"gemini", "--prompt=" + text + "\n\nhi", "-y"}, true},
		{[]string{"gemini", "-e", "a", "-i", "go on"}, []string{"gemini", "-e", "a", "-i", text + "\n\ngo on"}, true},
		{[]string{"gemini", "-m", "x", "fix", "it"}, []string{"gemini", "-m", "x", text + "\n\nfix", "it"}, true},
		{[]string{"gemini", "--resume", "abc"}, []string{"gemini", "-i", text, "--resume", "abc"}, true},
		{[]string{"gemini", "mcp", "list"}, []string{"gemini", "mcp", "list"}, false},
		{[]string{"gemini", "--list-sessions"}, []string{"gemini", "--list-sessions"}, false},
	} {
		orig := slices.Clone(tt.argv)
		got, class, ok := Harness{}.PlaceAtLaunch(tt.argv, 1, text)
		if ok != tt.ok || !slices.Equal(got, tt.want) || (ok && class != contract.ManifestPreFrameLeading) {
			t.Errorf("%q → %q %s %v, want %q %v", tt.argv, got, class, ok, tt.want, tt.ok)
		}
		if !slices.Equal(tt.argv, orig) {
			t.Errorf("argv modified: %q", tt.argv)
		}
	}
}

func TestRelaunchArgv(t *testing.T) {
	for _, tt := range []struct {
		argv   []string
		resume bool
		want   []string
		ok     bool
	}{
		{[]string{"gemini", "-m", "x"}, true, []string{"gemini", "--resume", "ID", "-m", "x"}, true},
		{[]string{"gemini", "-m", "x"}, false, []string{"gemini", "-m", "x"}, true},
		{[]string{"gemini", "--session-id", "old", "-i", "first", "-y"}, true, []string{"gemini", "--resume", "ID", "-y"}, true},
		{[]string{"gemini", "--session-id", "old", "-i", "first", "-y"}, false, []string{"gemini", "-i", "first", "-y"}, true},
		{[]string{"gemini", "-r", "latest", "fix", "it"}, true, []string{"gemini", "--resume", "ID"}, true},
		{[]string{"gemini", "-r", "latest", "fix", "it"}, false, []string{"gemini", "fix", "it"}, true},
		{[]string{"gemini", "-p", "hi", "--resume=3"}, true, []string{"gemini", "--resume", "ID", "-p", "hi"}, true},
		{[]string{"gemini", "skills", "list"}, true, []string{"gemini", "skills", "list"}, false},
	} {
		got, ok := Harness{}.RelaunchArgv(tt.argv, 1, "ID", tt.resume)
		if ok != tt.ok || !slices.Equal(got, tt.want) {
			t.Errorf("%q resume=%v → %q %v, want %q %v", tt.argv, tt.resume, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := (Harness{}).RelaunchArgv([]string{"gemini"}, 1, "", true); ok {
		t.Error("resume without an id")
	}
}
