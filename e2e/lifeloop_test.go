package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// lifeloopBin builds bin/lifeloop once per test binary, into a temporary
// folder removed when the tests end.
func lifeloopBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "lifeloop-e2e-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "lifeloop")
		cmd := exec.CommandContext(context.Background(), "go", "build", "-o", builtBin, "./cmd/lifeloop")
		cmd.Dir = testharness.ModuleRoot(t)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building lifeloop: %v", buildErr)
	}
	return builtBin
}

// removeBuilt deletes what lifeloopBin built.
func removeBuilt() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}
