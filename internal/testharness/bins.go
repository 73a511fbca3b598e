package testharness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// BuildTags are the Makefile's BUILDTAGS, for tests that build
// cmd/lifeloop: they run the binary `make build` makes (static; see the
// Makefile). TestBuildTagsMatchTheMakefile keeps the two equal.
const BuildTags = "urfave_cli_no_docs,netgo,osusergo"

// ModuleRoot returns the directory holding lifeloop's go.mod, found by
// walking up from the test's working directory.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	root, err := FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var moduleRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("testharness: working directory: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("testharness: no go.mod above the working directory; run the tests from inside the lifeloop module")
		}
		dir = parent
	}
})

// FindModuleRoot is ModuleRoot for callers without a testing.TB (a
// TestMain).
func FindModuleRoot() (string, error) { return moduleRoot() }

// ClaudeBin returns the path of the pinned Claude Code binary, or skips the
// test when it is not installed (fails instead when CI=true).
func ClaudeBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "claude", "LIFELOOP_CLAUDE_BIN")
}

// CodexBin returns the path of the pinned Codex binary, or skips the test
// when it is not installed (fails instead when CI=true).
func CodexBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "codex", "LIFELOOP_CODEX_BIN")
}

// GeminiBin returns the path of the pinned Gemini CLI binary, or skips the
// test when it is not installed (fails instead when CI=true).
func GeminiBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "gemini", "LIFELOOP_GEMINI_BIN")
}

// OpenCodeBin returns the path of the pinned OpenCode binary, or skips the
// test when it is not installed (fails instead when CI=true).
func OpenCodeBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "opencode", "LIFELOOP_OPENCODE_BIN")
}

func harnessBin(t testing.TB, name, envVar string) string {
	t.Helper()
	path, err := lookupHarnessBin(name, envVar)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v (CI=true: the harnesses must be installed; run `make harnesses`)", err)
	}
	t.Skipf("%v; run `make harnesses`", err)
	return ""
}

// HarnessDirVar names a folder of harness executables (a node_modules/.bin,
// e.g. harnesses-latest/node_modules/.bin from `make harnesses-latest`)
// that replaces the pinned harnesses/node_modules/.bin for every harness
// whose own LIFELOOP_<HARNESS>_BIN is not set.
const HarnessDirVar = "LIFELOOP_HARNESS_DIR"

// HarnessBinDir is the folder the harness executables are taken from:
// $LIFELOOP_HARNESS_DIR, or the pinned harnesses/node_modules/.bin.
func HarnessBinDir() (string, error) {
	if d := os.Getenv(HarnessDirVar); d != "" {
		return d, nil
	}
	root, err := FindModuleRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "harnesses", "node_modules", ".bin"), nil
}

func lookupHarnessBin(name, envVar string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", envVar, p, err)
		}
		return p, nil
	}
	dir, err := HarnessBinDir()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("%s not installed at %s", name, p)
	}
	return p, nil
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}
