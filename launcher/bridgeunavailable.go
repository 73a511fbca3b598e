package launcher

import (
	"context"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// withBridgeUnavailable returns the launch's observations with, first,
// the capability.degraded that says the hook bridge was asked for and
// not installed (why, in its evidence): the harness runs without it.
// The moment goes where telemetry's own degradations go, so the stream
// records it after session.started. obs may be nil (no telemetry); the
// channel returned is closed when obs is, or forsaken when ctx ends.
func withBridgeUnavailable(ctx context.Context, obs <-chan Moment, why *adapters.BridgeUnavailable, now time.Time) <-chan Moment {
	at := now.Unix()
	evidence := why.Error()
	rc := contract.RetryAfterReread
	m := Moment{
		Event:   contract.EventCapabilityDegraded,
		Status:  contract.StatusDegraded,
		Summary: map[string]any{"reason": "hook_bridge_unavailable"},
		Degradations: []contract.CapabilityDegradation{{
			Capability: "hooks", PreviousSupport: contract.SupportNative, CurrentSupport: contract.SupportUnavailable,
			ObservedAtEpochS: &at, Evidence: &evidence, RetryClass: &rc,
		}},
	}
	out := make(chan Moment, 1)
	out <- m
	if obs == nil {
		close(out)
		return out
	}
	go func() { // ends when obs is closed (its watcher stopped) or ctx ends
		defer close(out)
		for m := range obs {
			select {
			case out <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
