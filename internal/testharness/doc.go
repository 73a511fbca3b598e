// Package testharness is lifeloop's test bench: helpers that run the real
// harness binaries (Claude Code, Codex) fully offline against the loopback
// mock model server (package mockmodel), drive them through a PTY
// (Terminal), isolate every run in temporary homes (HarnessEnv), and build
// the scripted fake harness (BuildFakeHarness). It is imported by tests
// only.
//
// # The real binaries
//
// ClaudeBin and CodexBin (and GeminiBin, OpenCodeBin, PiBin) find the
// pinned binaries installed by `make harnesses` (harnesses/node_modules/.bin,
// relative to the module root), or those in $LIFELOOP_HARNESS_DIR (the
// newest versions: `make e2e-latest`), or take $LIFELOOP_CLAUDE_BIN /
// $LIFELOOP_CODEX_BIN …. When a binary
// is missing the test is skipped, except under CI=true where it fails.
// A harness whose package's engines need a newer Node than the PATH's
// (Pi 1.x) runs with the project's Node 26, OpenClaw's, first on its
// environment's PATH (HarnessEnv.UsePi, HarnessEnv.UseNodeFor).
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
//
// # Driving the interactive TUIs (observed)
//
//   - Claude Code goes straight to its prompt when $HOME/.claude.json is
//     seeded as NewHarnessEnv does. Under `lifeloop run` it takes keys once
//     session.started is in the ledger (ClaudeStarted); alone, once its
//     prompt glyph is drawn (ClaudeScreenReady). Type the prompt, wait for
//     it to be echoed, then send "\r" separately (a burst ending in "\r"
//     can be taken as a paste). "/exit" then Enter exits 0 (ClaudeExit).
//     The readiness helpers of every harness are in <harness>.go and
//     ledger.go: evidence first, the screen as a last resort.
//   - Codex draws with absolute cursor moves, so words arrive on separate
//     "lines" of Output; string patterns passed to Terminal.WaitFor also
//     match with whitespace removed for that reason. Before the first
//     prompt only its screen says it takes input (CodexScreenReady); a
//     turn is over at frame.ended or the rollout's task_complete;
//     "/quit" then Enter exits 0. The project folder is marked trusted in config.toml so no
//     trust dialog appears.
//   - The Codex TUI answers a hidden title-generation request without
//     tools (the mock classifies it "codex-side") and leaves a detached
//     app-server daemon (two processes, reparented to init, in their own
//     session) unless started with --no-daemon. HarnessEnv finds such
//     processes by the environment they inherited and kills and reports
//     them in t.Cleanup.
//   - Both TUIs ask the terminal for the cursor position at start-up and
//     wait for the answer; Terminal answers it.
//   - When a session leader on a PTY exits, the kernel sends SIGHUP to the
//     terminal's foreground process group: children survive their leader
//     only if they ignore SIGHUP too.
package testharness
