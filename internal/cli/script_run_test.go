package cli

import (
	"os"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdWaitFile waits up to 30s for a file to exist: `waitfile PATH`.
// Scripts use it to sync with a background harness without sleeping.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	p := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not appear within 30s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}
