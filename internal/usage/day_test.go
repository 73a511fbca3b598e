package usage

import (
	"testing"
	"time"
)

// A reader's day of a call, reused from the call before, is always the
// call's own date in the zone, across midnights and a change of clocks.
func TestDayOfEveryCallIsItsOwn(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Skipf("no zone database: %v", err)
	}
	r := &reader{loc: loc}
	at := time.Date(2026, 3, 27, 20, 0, 0, 0, time.UTC) // the clocks go forward on the 29th
	for range 200 {
		if got, want := r.dayOf(at), at.In(loc).Format("2006-01-02"); got != want {
			t.Fatalf("%v: day %s, want %s", at, got, want)
		}
		at = at.Add(47 * time.Minute)
	}
	if got := r.dayOf(time.Time{}); got != "unknown" {
		t.Fatalf("a call without time: day %q, want unknown", got)
	}
}
