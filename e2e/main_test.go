// Package e2e holds lifeloop's end-to-end tests: they run the real,
// pinned harness binaries (installed by `make harnesses`) fully offline
// against the loopback mock model server. They are skipped with -short,
// and skipped when the binaries are missing unless CI=true.
//
// Every test runs in parallel with the others (t.Parallel), as many at
// once as -parallel allows (GOMAXPROCS by default): each has its own HOME,
// state folder, mock model and backend, and finds its stray processes by
// its own marker, so no test shares anything with another. Most spend
// their time in a harness's start-up or waiting on it, which keeps
// `make test` short on two cores.
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
