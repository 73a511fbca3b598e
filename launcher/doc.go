// Package launcher supervises one wrapped harness session: `lifeloop run`.
//
// It wires the terminal (ptyio), the session's recording pipeline
// (internal/pipeline: ledger, sinks, clients, router), the telemetry
// follower (internal/observe) and the control socket around one harness
// process, and owns the session's state machine (seed 001):
//
//	pending → running ⇄ paused → completed | failed | aborting → aborted
//	pending → rejected (a required capability is unsupported)
//
// One goroutine, the supervisor loop in Run, owns all session state; the
// child's exit, signals, control requests, telemetry and timers reach it
// over channels, and nothing it does waits on the harness, a client or a
// renewal. A renewal runs beside it (renew.go) and asks it for what it
// needs by message; a harness that exited is drained (drain.go) before
// the session ends. Every moment reaches the ledger through one path
// (record.go): the session's keeper (internal/stream) decides what is
// recorded, in which order and linked to what (docs/contract.md "One
// coherent stream per session"); the loop records what it releases and
// arms one timer at its next deadline. The harness sits
// behind Process and Terminal (harness.go), so tests run it without a
// PTY. Nothing here writes to the terminal the harness owns: messages go
// to the session log (lifeloop.log), and the CLI prints to stderr only
// after the terminal is restored.
//
// # Signal policy
//
//   - Keyboard Ctrl-C in raw mode is a byte through the PTY, not a signal:
//     the harness decides what it means.
//   - SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to lifeloop are forwarded to
//     the harness's process group; lifeloop records that it delivered the
//     stop (so an exit code of 0 after SIGINT is still reported as
//     stopped/cancelled) and emits session.ending.
//   - SIGUSR1 and SIGUSR2 are forwarded and change nothing else.
//   - A second SIGINT or SIGTERM, or the grace period (--grace, default 5s)
//     after the first stop signal, escalates to SIGKILL of the group.
//   - abort: SIGTERM → grace → SIGKILL, state aborting → aborted.
//   - pause/resume: SIGSTOP/SIGCONT to the group, state paused/running.
//   - --max-duration: SIGTERM → grace → SIGKILL, state failed, reason
//     timeout.
//   - When the harness exits, any process still left in its group is
//     killed with SIGKILL; descendants that escaped the group are reported
//     in session.ended (leftover_pids).
//
// Every signal.Notify has its signal.Stop. The policy's signals are
// caught and released off the start-up path (SignalCatch), and caught
// before any harness starts.
package launcher
