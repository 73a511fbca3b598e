package e2e

import (
	"slices"
	"testing"
)

// TestGroups: a test that types into a terminal is serial, one that calls
// t.Parallel is parallel, and every test is in exactly one group.
func TestGroups(t *testing.T) {
	t.Parallel()
	serial, parallel, err := testGroups(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"TestRunClaudeTUI", "TestRenewOpenCodeTUIUnderLifeloop", "TestTopDashboard"} {
		if !slices.Contains(serial, name) || slices.Contains(parallel, name) {
			t.Errorf("%s is not in the serial group", name)
		}
	}
	for _, name := range []string{"TestGroups", "TestWatchClaude", "TestRunGeminiPrompt"} {
		if !slices.Contains(parallel, name) || slices.Contains(serial, name) {
			t.Errorf("%s is not in the parallel group", name)
		}
	}
	if slices.Contains(serial, "TestMain") || slices.Contains(parallel, "TestMain") {
		t.Error("TestMain is in a group")
	}
	if len(serial) < 20 || len(parallel) < 50 {
		t.Errorf("%d serial and %d parallel tests: the source was not read", len(serial), len(parallel))
	}
}
