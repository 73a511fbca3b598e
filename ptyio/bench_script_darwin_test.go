package ptyio

import (
	"testing"
	"time"
)

// runScript would time script(1) as the Linux baseline does; macOS's
// script takes other flags and its CPU time is not readable from the
// process table here, so the baseline row is skipped.
func runScript(b *testing.B, _, _ string) time.Duration {
	b.Helper()
	b.Skip("the script(1) baseline is measured on Linux only")
	return 0
}
