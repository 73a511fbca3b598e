package cli

import (
	"runtime/debug"
	"testing"
)

// gcPercent reads the collector's pace.
func gcPercent() int {
	v := debug.SetGCPercent(100)
	debug.SetGCPercent(v)
	return v
}

// TestSlowCollectorRestoresThePace: the pace is slowed while any run
// holds it, restored once the last lets go (each restore counting
// once), and a slower pace the environment set is kept. Not parallel:
// no usage run beside it holds the pace.
func TestSlowCollectorRestoresThePace(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	a, b := slowCollector(), slowCollector()
	if got := gcPercent(); got != 400 {
		t.Fatalf("pace %d while two runs hold it, want 400", got)
	}
	a()
	a()
	if got := gcPercent(); got != 400 {
		t.Fatalf("pace %d while one run holds it, want 400", got)
	}
	b()
	if got := gcPercent(); got != 100 {
		t.Fatalf("pace %d once both let go, want 100", got)
	}
	debug.SetGCPercent(-1)
	c := slowCollector()
	if got := gcPercent(); got != -1 {
		t.Fatalf("pace %d with the collector off, want it left off", got)
	}
	c()
	if got := gcPercent(); got != -1 {
		t.Fatalf("pace %d after, want -1", got)
	}
}
