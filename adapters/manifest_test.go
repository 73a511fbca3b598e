package adapters

import (
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// A bridge's native frame claim survives watch's synthesized one: a
// manifest holds one support state per event, so telemetry_only must not
// lower it.
func TestRaiseWatchKeepsNativeClaims(t *testing.T) {
	m := WrapperManifest("x", "X", contract.RolePrimaryWorker)
	Raise(m, contract.EventFrameOpening, contract.SupportNative, contract.ModeLauncherWrapper)
	Raise(m, contract.EventContextPressureObserved, contract.SupportSynthesized, contract.ModeLauncherWrapper)
	RaiseWatch(&m, contract.EventFrameOpening, contract.EventContextPressureObserved)

	if got := m.LifecycleEvents[contract.EventFrameOpening]; got.Support != contract.SupportNative || slices.Contains(got.Modes, contract.ModeTelemetryOnly) {
		t.Errorf("frame.opening = %+v, want native without telemetry_only", got)
	}
	if got := m.LifecycleEvents[contract.EventContextPressureObserved]; got.Support != contract.SupportSynthesized || !slices.Contains(got.Modes, contract.ModeTelemetryOnly) {
		t.Errorf("context.pressure_observed = %+v, want synthesized with telemetry_only", got)
	}
}
