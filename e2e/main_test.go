// Package e2e holds lifeloop's end-to-end tests: they run the real,
// pinned harness binaries (installed by `make harnesses`) fully offline
// against the loopback mock model server. They are skipped with -short,
// and skipped when the binaries are missing unless CI=true.
//
// Most tests run one after another. Those marked t.Parallel (OpenClaw's,
// the sessions resumed at launch, watch, OpenTelemetry, and the safe
// renewal's dialog and draft tests) share nothing with another test —
// each has its own HOME, state folder, mock model and backend, and finds
// its stray processes by its own marker — and spend most of their time
// waiting on a harness; they run after the others, as many at once as
// -parallel allows (GOMAXPROCS by default), which keeps `make test`
// short on two cores.
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
