// Package observetest runs a harness's telemetry over a file a test
// writes, for the adapters' parser tests.
package observetest

import (
	"context"
	"os"
	"path/filepath"
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
