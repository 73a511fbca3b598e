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
