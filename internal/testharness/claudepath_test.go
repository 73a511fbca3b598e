package testharness

import (
	"strings"
	"testing"
)

func TestClaudeProjectDirName(t *testing.T) {
	// Expected values were produced by Claude Code 2.1.197 itself.
	tests := []struct {
		name, cwd, want string
	}{
		{"dots and underscores", "/tmp/h2t/my_proj.dir", "-tmp-h2t-my-proj-dir"},
		{"punctuation", "/tmp/h2t/a b+c~d@e", "-tmp-h2t-a-b-c-d-e"},
		{"non-ascii", "/tmp/h2t/ünï", "-tmp-h2t--n-"},
		{"long path is cut and hashed", "/tmp/h2t/" + strings.Repeat("x", 220), "-tmp-h2t-" + strings.Repeat("x", 191) + "-lhuylo"},
		{"plain", "/home/dev/project", "-home-dev-project"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ClaudeProjectDirName(tc.cwd); got != tc.want {
				t.Errorf("ClaudeProjectDirName(%q) = %q, want %q", tc.cwd, got, tc.want)
			}
		})
	}
}
