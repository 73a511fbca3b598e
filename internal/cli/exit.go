package cli

import (
	"errors"
	"fmt"
)

// Exit codes of every command except `run`, which passes the harness's code
// through (128+N for signal N) and uses 125/126/127 before launch.
const (
	ExitOK         = 0 // success
	ExitFailed     = 1 // the contract said no, validation failed, the operation failed
	ExitUsage      = 2 // bad flags or arguments
	ExitUnreadable = 3 // input unreadable or not JSON

	ExitLauncherFailed = 125 // run: lifeloop refused or failed before launch
	ExitNotExecutable  = 126 // run: the command is not executable
	ExitNotFound       = 127 // run: the command was not found
)

// exitError carries an exit code and a one-line message for stderr.
// An empty message prints nothing (the command already reported).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode implements cli.ExitCoder.
func (e *exitError) ExitCode() int { return e.code }

// exitf returns an error that makes Main exit with code after printing the
// formatted one-line message to stderr.
func exitf(code int, format string, args ...any) error {
	return &exitError{code: code, msg: fmt.Sprintf(format, args...)}
}

// silentExit makes Main exit with code without printing anything.
func silentExit(code int) error { return &exitError{code: code} }

// usageErrorf is exitf(ExitUsage, ...).
func usageErrorf(format string, args ...any) error {
	return exitf(ExitUsage, format, args...)
}

// codeOf maps any error returned by a command to an exit code and message.
// It is the one place where errors become exit codes.
func codeOf(err error) (int, string) {
	if err == nil {
		return ExitOK, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.msg
	}
	// urfave/cli reports flag parsing problems as plain errors.
	return ExitUsage, err.Error()
}
