package testharness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

var fakeHarness = sync.OnceValues(buildFakeHarness)

// BuildFakeHarness builds the scripted fake harness (package fakeharness;
// its documentation lists the steps) once per test binary and returns the
// path of the executable. The binary goes to <module root>/.cache/testbin
// (ignored by git), written atomically so concurrent test binaries can
// share it.
func BuildFakeHarness(t testing.TB) string {
	t.Helper()
	path, err := fakeHarness()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func buildFakeHarness() (string, error) {
	root, err := FindModuleRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".cache", "testbin")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("testharness: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "fakeharness-*.tmp")
	if err != nil {
		return "", fmt.Errorf("testharness: %w", err)
	}
	tmp.Close()
	defer func() { _ = os.Remove(tmp.Name()) }()
	goBin, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("testharness: building the fake harness needs the go command on PATH: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-o", tmp.Name(), "github.com/lifeloop/lifeloop/internal/testharness/fakeharness")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("testharness: build the fake harness: %w\n%s", err, out)
	}
	final := filepath.Join(dir, "fakeharness")
	if err := os.Rename(tmp.Name(), final); err != nil {
		return "", fmt.Errorf("testharness: %w", err)
	}
	return final, nil
}
