package launcher

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
)

// TestEmitCapabilityDegraded: a client emits capability.degraded through
// the live wrapper with its degradation and telemetry_summary, recorded
// on the moment; one without a degradation is refused and nothing is
// recorded.
func TestEmitCapabilityDegraded(t *testing.T) {
	f, ft := renewFixture(t)
	f.cfg.Grace = 50 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	evidence, retry := "no pressure reading for 10 min; the policy waits", contract.RetrySafe
	deg := contract.CapabilityDegradation{Capability: "renewal.policy", PreviousSupport: contract.SupportSynthesized,
		CurrentSupport: contract.SupportUnavailable, Evidence: &evidence, RetryClass: &retry}
	summary := map[string]any{"policy": map[string]any{"client": "lifeloop-autorenew", "decision": "gave_up"}}

	before := countEvents(f.rec.events(), contract.EventCapabilityDegraded)
	err := callCtl(t, f, control.OpEmit, control.EmitArgs{Event: contract.EventCapabilityDegraded, TelemetryDetail: summary}, nil)
	if err == nil || !strings.Contains(err.Error(), "nothing was recorded") {
		t.Fatalf("capability.degraded without a degradation: %v, want a refusal saying nothing was recorded", err)
	}
	if n := countEvents(f.rec.events(), contract.EventCapabilityDegraded); n != before {
		t.Fatalf("%d capability.degraded recorded after a refusal, want %d", n, before)
	}

	if err := callCtl(t, f, control.OpEmit, control.EmitArgs{Event: contract.EventCapabilityDegraded, TelemetryDetail: summary,
		Degradations: []contract.CapabilityDegradation{deg}}, nil); err != nil {
		t.Fatalf("emit capability.degraded: %v", err)
	}
	m, ok := f.rec.last(contract.EventCapabilityDegraded)
	if !ok || len(m.Degradations) != 1 || m.Degradations[0].Capability != "renewal.policy" ||
		m.Degradations[0].CurrentSupport != contract.SupportUnavailable || m.Degradations[0].Evidence == nil || *m.Degradations[0].Evidence != evidence {
		t.Fatalf("recorded capability.degraded %+v (found %v), want the emitted degradation", m.Degradations, ok)
	}
	if m.Status != contract.StatusDegraded {
		t.Errorf("status %q, want degraded", m.Status)
	}
	if p, _ := m.Summary["policy"].(map[string]any); p["decision"] != "gave_up" {
		t.Errorf("telemetry_summary %v, want the policy object", m.Summary)
	}

	bad := deg
	bad.Capability = ""
	if err := callCtl(t, f, control.OpEmit, control.EmitArgs{Event: contract.EventCapabilityDegraded,
		Degradations: []contract.CapabilityDegradation{bad}}, nil); err == nil {
		t.Error("a degradation without a capability was accepted")
	}
	if n := countEvents(f.rec.events(), contract.EventCapabilityDegraded); n != before+1 {
		t.Errorf("%d capability.degraded, want %d", n, before+1)
	}
	ft.proc(0).exit(ptyio.ExitStatus{Code: 0})
	<-done
}
