// Package e2e holds lifeloop's end-to-end tests: they run the real,
// pinned harness binaries (installed by `make harnesses`) fully offline
// against the loopback mock model server. They are skipped with -short,
// and skipped when the binaries are missing unless CI=true.
//
// Most tests run in parallel with the others (t.Parallel), as many at
// once as -parallel allows (GOMAXPROCS by default): each has its own HOME,
// state folder, mock model and backend, and finds its stray processes by
// its own marker, so no test shares anything with another. Those that
// type into a harness's terminal and time their keys (the TUIs, the
// renewals, the typeahead and top) run one after another first, on a
// machine the others do not load yet.
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
