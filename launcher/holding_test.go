package launcher

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestStatusSaysWhatIsHeld: while the harness has not named its session,
// status says session.started is held, why, and how long it may still
// wait; once the bind wait passes it is recorded and nothing is held.
func TestStatusSaysWhatIsHeld(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "echo ready; sleep 3")
	f.cfg.Adapter = adapters.AdapterOf(claude.Harness{})
	f.cfg.BridgeArgs = []string{"--settings", "x.json"}
	f.cfg.BindWait = 1500 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ready") })
	var st control.Status
	if err := callCtl(t, f, control.OpStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Holding) != 1 {
		t.Fatalf("holding %+v, want the held session.started", st.Holding)
	}
	h := st.Holding[0]
	if h.Event != contract.EventSessionStarted || h.Reason != "waiting for the harness to name its session" ||
		h.SecondsLeft == nil || *h.SecondsLeft <= 0 || *h.SecondsLeft > 1.5 {
		t.Errorf("hold %+v", h)
	}
	if !strings.HasPrefix(h.String(), "session.started held: waiting for the harness to name its session, ") || !strings.HasSuffix(h.String(), " s left") {
		t.Errorf("hold reads %q", h.String())
	}
	testutil.WaitFor(t, func() bool {
		_, ok := f.rec.last(contract.EventSessionStarted)
		return ok
	})
	var after control.Status
	if err := callCtl(t, f, control.OpStatus, nil, &after); err != nil {
		t.Fatal(err)
	}
	if len(after.Holding) != 0 {
		t.Errorf("still holding %+v after the bind wait", after.Holding)
	}
	<-done
}
