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
		{[]string{"gemini", "-m", "gemini-2.5-flash", "-p", "hi"}, true},
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
		{[]string{"npx", "@google/gemini-cli", "-p", "hi"}, true},
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
