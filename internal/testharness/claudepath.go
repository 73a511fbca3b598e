package testharness

import "github.com/lifeloop/lifeloop/adapters/claude"

// ClaudeProjectDirName returns the folder name Claude Code 2.1.197 uses
// under ~/.claude/projects for the working directory cwd (already
// resolved with realpath): every UTF-16 code unit outside [A-Za-z0-9]
// becomes '-', and names longer than 200 characters are cut and suffixed
// with "-" and a base-36 hash. See the package documentation; the rule
// itself is claude.ProjectDirName.
func ClaudeProjectDirName(cwd string) string { return claude.ProjectDirName(cwd) }
