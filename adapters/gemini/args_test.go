package gemini

import (
	"slices"
	"testing"
)

func TestPinSession(t *testing.T) {
	for _, tt := range []struct {
		argv []string
		pin  bool
	}{
		{[]string{"gemini"}, true},
		{[]string{"gemini", "-m", "gemini-2.5-flash", "-p", "hi"}, false}, // headless
		{[]string{"gemini", "--prompt=hi"}, false},
		{[]string{"gemini", "-i", "hi"}, true},
		{[]string{"gemini", "-p", "hi", "-i", "more"}, true},
		{[]string{"gemini", "fix", "the", "bug"}, true},
		{[]string{"gemini", "-e", "a", "b", "mcp"}, true}, // "mcp" is an -e value
		{[]string{"gemini", "--resume", "latest"}, false},
		{[]string{"gemini", "-r"}, false},
		{[]string{"gemini", "--session-id=x"}, false},
		{[]string{"gemini", "--session-file", "s.json"}, false},
		{[]string{"gemini", "mcp", "list"}, false},
		{[]string{"gemini", "hooks", "migrate"}, false},
		{[]string{"gemini", "--list-sessions"}, false},
		{[]string{"gemini", "--version"}, false},
		{[]string{"npx", "@google/gemini-cli", "-i", "hi"}, true},
		{[]string{"npx", "@google/gemini-cli", "-p", "hi"}, false},
	} {
		start := 1
		if tt.argv[0] == "npx" {
			start = 2
		}
		got, id := Harness{}.PinSession(tt.argv, start)
		if (id != "") != tt.pin {
			t.Errorf("%v: pinned %q", tt.argv, id)
			continue
		}
		want := slices.Clone(tt.argv)
		if tt.pin {
			want = slices.Insert(want, start, sessionIDFlag, id)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%v → %v, want %v", tt.argv, got, want)
		}
	}
}

func TestResumedSession(t *testing.T) {
	const id = "0b7e3c2a-1f2d-4c5e-8a9b-0c1d2e3f4a5b"
	for _, c := range []struct {
		args   []string
		id     string
		resume bool
	}{
		{[]string{"-r", "latest", "-p", "hi"}, "", true},
		{[]string{"-r", "-p", "hi"}, "", true},
		{[]string{"--resume"}, "", true},
		{[]string{"--resume=" + id}, id, true},
		{[]string{"-m", "m", "-r", id, "-p", "hi"}, id, true},
		{[]string{"-r", "3"}, "", false},
		{[]string{"--session-id", id}, "", false},
		{[]string{"-p", "hi"}, "", false},
		{[]string{"--list-sessions"}, "", false},
	} {
		got, ok := Harness{}.ResumedSession(append([]string{"gemini"}, c.args...), 1)
		if got != c.id || ok != c.resume {
			t.Errorf("%v: %q %v, want %q %v", c.args, got, ok, c.id, c.resume)
		}
	}
}
