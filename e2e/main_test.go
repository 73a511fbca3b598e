// Package e2e holds lifeloop's end-to-end tests: they run the real,
// pinned harness binaries (installed by `make harnesses`) fully offline
// against the loopback mock model server. They are skipped with -short,
// and skipped when the binaries are missing unless CI=true.
package e2e

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeBuilt()
		os.Exit(code)
	}))
}
