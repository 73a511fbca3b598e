// Package testharness is lifeloop's test bench: helpers that run the real
// harness binaries (Claude Code, Codex) fully offline against the loopback
// mock model server (package mockmodel), drive them through a PTY
// (Terminal), isolate every run in temporary homes (HarnessEnv), and build
// the scripted fake harness (BuildFakeHarness). It is imported by tests
// only.
//
// # The real binaries
//
// ClaudeBin and CodexBin find the pinned binaries installed by
// `make harnesses` (harnesses/node_modules/.bin, relative to the module
// root) or take $LIFELOOP_CLAUDE_BIN / $LIFELOOP_CODEX_BIN. When a binary
// is missing the test is skipped, except under CI=true where it fails.
//
// # Where the harnesses write their transcripts (measured, 2.1.197/0.169.0)
//
// Claude Code writes $HOME/.claude/projects/<dir>/<session-uuid>.jsonl
// ($CLAUDE_CONFIG_DIR replaces $HOME/.claude when set). <dir> is the
// working directory after realpath with every UTF-16 code unit outside
// [A-Za-z0-9] replaced by '-': '/', '.', '_', ' ', '+', '~', '@' all
// become '-', and a non-ASCII letter such as 'ü' becomes one '-'. So
// /tmp/my_proj.dir → -tmp-my-proj-dir. When the result is longer than
// 200 characters it is cut to 200 and "-" plus base-36 of the absolute
// value of a 32-bit Java-style string hash of the original path is
// appended. ClaudeProjectDirName implements this rule and the end-to-end
// bench checks it against the real binary, long paths included.
//
// Codex writes $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<local time
// YYYY-MM-DDThh-mm-ss>-<thread-uuid>.jsonl.
package testharness
