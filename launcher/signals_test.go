package launcher

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
)

// TestLaunchSignalsNeedPolicy: a SignalCatch passed without HandleSignals
// is not used (the policy is off), so a catch that never becomes ready
// cannot hold the session's start.
func TestLaunchSignalsNeedPolicy(t *testing.T) {
	never := &SignalCatch{ch: make(chan os.Signal, 1), ready: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := Launch(context.Background(), Options{
			StateDir: t.TempDir(), Argv: []string{"true"}, Dir: t.TempDir(), Env: os.Environ(),
			In: strings.NewReader(""), Out: io.Discard, Signals: never, Registry: builtin.Default(),
		})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Launch waited on signals it was not to handle")
	}
}
