// Package e2e holds lifeloop's end-to-end tests: they run the real,
// pinned harness binaries (installed by `make harnesses`) fully offline
// against the loopback mock model server. They are skipped with -short,
// and skipped when the binaries are missing unless CI=true.
//
// Most tests run in parallel with the others (t.Parallel), as many at
// once as -parallel allows (GOMAXPROCS by default): each has its own HOME,
// state folder, mock model and backend, and finds its stray processes by
// its own marker, so no test shares anything with another. Those that
// type into a harness's terminal and time their keys (terminalTests: the
// TUIs, the renewals, the typeahead and top) run one after another first.
//
// LIFELOOP_E2E_PHASE splits the tests between two processes, which
// `make test` runs side by side: "terminal" runs only terminalTests,
// "headless" every other test. The terminal tests use little processor
// time and wait on the harnesses' screens; the others keep both
// processors busy: side by side, neither waits for the other, and the
// headless process runs at a lower priority so the terminal tests' keys
// still come on time. Unset, one process runs them all.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// phaseVar names the tests a process runs: terminal, headless or all.
const phaseVar = "LIFELOOP_E2E_PHASE"

// terminalTests type into a harness's terminal and time their keys; they
// are the tests that do not call t.Parallel.
var terminalTests = []string{
	"TestClaudeTUI",
	"TestCodexTUI",
	"TestRenewGeminiTUI",
	"TestRunGeminiTUI",
	"TestRunGeminiTUISigint",
	"TestLaunchPlacementReachesModel",
	"TestRelaunchResumesConversation",
	"TestRenewClaudeTUIUnderLifeloop",
	"TestRenewCodexTUIUnderLifeloop",
	"TestRenewClaudeTUIFresh",
	"TestRunOpenCodeTUI",
	"TestRunOpenCodeTUISigint",
	"TestRenewOpenCodeTUIUnderLifeloop",
	"TestRunOpenCodeTUINewSession",
	"TestRenewPiTUIUnderLifeloop",
	"TestRunPiTUI",
	"TestRunPiTUISigint",
	"TestRunPiTUINewSession",
	"TestRenewCrashRecovery",
	"TestRenewSaysWhatWasNotDelivered",
	"TestFreshRenewalResetsPressure",
	"TestSIGINTDuringClaudeRenewal",
	"TestKeysTypedDuringResumeReachTheNewHarness",
	"TestRenewWithANote",
	"TestRunClaudeTUI",
	"TestRunClaudeTUISigint",
	"TestRunCodexTUI",
	"TestRunClaudeTUIClear",
	"TestTopDashboard",
	"TestTopRestoresTerminalOnSIGTERM",
	"TestCodexTypeaheadDuringRenewal",
}

func TestMain(m *testing.M) {
	flag.Parse()
	if err := choosePhase(os.Getenv(phaseVar)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		removeBuilt()
		os.Exit(code)
	}))
}

// choosePhase sets -test.run (terminal) or -test.skip (headless) to
// terminalTests; "" leaves the flags as given.
func choosePhase(phase string) error {
	names := "^(" + strings.Join(terminalTests, "|") + ")$"
	switch phase {
	case "":
		return nil
	case "terminal":
		return flag.Set("test.run", names)
	case "headless":
		return flag.Set("test.skip", names)
	}
	return fmt.Errorf("%s=%q: use terminal, headless or leave it unset", phaseVar, phase)
}
