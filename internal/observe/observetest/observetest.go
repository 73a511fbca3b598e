// Package observetest runs a harness's telemetry over a file a test
// writes, for the adapters' parser tests.
package observetest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/observe"
)

// WatchText writes text to a file called name in a temporary folder,
// follows it from its start with h (a temporary HOME and working folder)
// and returns the moments observed until the watcher has been quiet for a
// second.
func WatchText(t testing.TB, h adapters.Telemetry, name, text string) []moment.Moment {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w, err := observe.Start(ctx, observe.Options{Harness: h, Env: []string{"HOME=" + t.TempDir()}, Path: path, FromStart: true, Cwd: t.TempDir()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	defer w.Wait()
	defer cancel()
	var out []moment.Moment
	for {
		select {
		case m, ok := <-w.Moments():
			if !ok {
				return out
			}
			out = append(out, m)
		case <-time.After(time.Second):
			return out
		}
	}
}

// Degraded returns the capability.degraded moments of ms.
func Degraded(ms []moment.Moment) []moment.Moment {
	var out []moment.Moment
	for _, m := range ms {
		if m.Event == contract.EventCapabilityDegraded {
			out = append(out, m)
		}
	}
	return out
}

// OneDrift checks what a harness's changed usage format must give: one
// capability.degraded (not one per record) with reason harness_drift,
// naming unreadable among what it could not read, context pressure
// down to partial, and frames still ending. It returns that moment.
func OneDrift(t testing.TB, ms []moment.Moment, unreadable string) moment.Moment {
	t.Helper()
	d := Degraded(ms)
	if len(d) != 1 {
		t.Fatalf("%d capability.degraded, want exactly one: %+v", len(d), d)
	}
	s := d[0].Summary
	if got, _ := s["unreadable"].(string); s["reason"] != "harness_drift" || !strings.Contains(got, unreadable) {
		t.Errorf("summary %v, want reason harness_drift naming %q", s, unreadable)
	}
	if len(d[0].Degradations) != 1 || d[0].Degradations[0].Capability != "context_pressure" || d[0].Degradations[0].CurrentSupport != contract.SupportPartial {
		t.Errorf("degradations %+v", d[0].Degradations)
	}
	if !slices.ContainsFunc(ms, func(m moment.Moment) bool { return m.Event == contract.EventFrameEnded }) {
		t.Error("no frame.ended: the drifted records stopped the turn's frames too")
	}
	return d[0]
}
