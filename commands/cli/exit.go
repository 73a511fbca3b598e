package cli

import (
	"errors"
	"fmt"

	"github.com/lifeloop/lifeloop/internal/exitcode"
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

// usageErrorf is exitf(exitcode.Usage, ...).
func usageErrorf(format string, args ...any) error {
	return exitf(exitcode.Usage, format, args...)
}

// codeOf maps any error returned by a command to an exit code and message.
// It is the one place where errors become exit codes.
func codeOf(err error) (int, string) {
	if err == nil {
		return exitcode.OK, ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, ee.msg
	}
	// urfave/cli reports flag parsing problems as plain errors.
	return exitcode.Usage, err.Error()
}
