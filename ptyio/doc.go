// Package ptyio is lifeloop's terminal plumbing: it runs one child process
// at a time under a pseudo-terminal and connects it to the user's terminal.
// It knows nothing of lifecycles, sessions or receipts.
//
// Two types split the job so that a harness can be restarted on the same
// terminal without the person noticing:
//
//   - [Terminal] owns the user's side: stdin, stdout, raw mode (only when
//     stdin is a TTY), the window size and SIGWINCH. It has exactly one
//     stdin reader goroutine for its whole life.
//   - [Child] is one process under its own PTY, in its own session and
//     process group with the PTY as controlling terminal. While it runs it
//     is attached to the Terminal: stdin bytes go to its PTY and its output
//     goes to the Terminal's Out.
//
// # Order of operations
//
// [Terminal.Start] follows the order of the creack/pty "Shell" example:
// start the process under the PTY (sized before exec so the child sees the
// right size from its first instruction) → start the wait goroutine at once
// → enter raw mode if stdin is a TTY (the caller defers [Terminal.Restore]
// right after [OpenTerminal]) → resize to the current size, then on every
// SIGWINCH → copy both ways. Raw mode is entered lazily by a successful
// Start (and again by a later Start after an explicit Restore), so a
// command that cannot be started leaves the terminal cooked and its error
// can be printed at once. Raw mode and the window size carry over from one
// child to the next.
//
// # Pass-through
//
// With TerminalConfig.PassThrough a child gets, in place of the PTY, each of
// the Terminal's In, Out and Err that is a file but not a terminal, as it
// is: it sees a terminal exactly where this process has one, reads a piped
// stdin itself and writes to a redirected stdout itself, byte for byte.
// With no terminal at all it gets no PTY (no copy loop, no drain), and
// what a PTY's hangup did is done without one: when it exits its process
// group gets SIGHUP and SIGCONT, and on Linux the kernel sends it SIGHUP
// when this process dies (macOS has no such signal). What passes through
// is not seen: input is not relayed (nothing to hold, no VEOF), output is
// not metered ([Activity].Metered).
//
// # Without a terminal
//
// Without PassThrough, when stdin is not a TTY (pipes, CI) the child still gets a PTY, sized from
// TerminalConfig.Cols/Rows (default 120×40) unless Out is a terminal, in
// which case Out's size is used. Stdin is relayed until EOF; then the PTY's
// end-of-file character (its termios VEOF, normally ^D) is written once to
// the attached child, and once to each child started afterwards. That is
// what a person typing ^D at an empty line does: a child reading its PTY in
// canonical mode sees end of input; a child that switched its PTY to raw
// mode receives the byte and decides for itself. One exception: when the
// relayed input ended without a newline, VEOF is written twice, because on
// a terminal the first ^D only hands the unterminated line to the reader
// and the second one is the end of input.
//
// Stdin is read by one goroutine for the Terminal's whole life. Bytes read
// while no child is attached (between a child's exit and the next Start)
// are held and given to the next child, so typing carries over a restart.
// In a TTY, end of input or a read error just ends the reader: a hung-up
// terminal is the supervisor's business (SIGHUP), not the relay's.
//
// Children inherit the signal dispositions of this process: a signal this
// process ignores (signal.Ignore) stays ignored in the child, while caught
// signals (signal.Notify) are reset to their defaults by exec.
//
// # Output and Done
//
// Each child's output loop reads its PTY master in 32 KiB chunks and writes
// them to Out, counting bytes and the time of the last output with atomics
// ([Child.Activity]). After the process exits the loop keeps reading until
// the PTY reports EIO (every slave descriptor closed), so no output is lost.
// A grandchild that keeps the slave open would delay EIO forever, so
// draining after exit is bounded: it stops after two [DrainQuiet] windows in
// a row without output or [DrainMax] after the exit, whichever comes first. [Child.Done] is
// closed only when the process has been reaped and the drain has ended.
//
// If writing to Out fails (stdout closed), the loop keeps draining the PTY
// and discards the output, so the child never blocks on a dead terminal.
package ptyio
