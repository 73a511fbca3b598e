package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// readJSONL parses every line of a JSONL file.
func readJSONL(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: bad line %.200q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sessionLedgers returns every session's receipts under stateDir, keyed
// by session id, with its session.json.
func sessionLedgers(t *testing.T, stateDir string) map[string][]map[string]any {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*", "receipts.jsonl"))
	out := map[string][]map[string]any{}
	for _, p := range paths {
		out[filepath.Base(filepath.Dir(p))] = readJSONL(t, p)
	}
	return out
}

// onlySession returns the id and receipts of the only session under
// stateDir, failing the test if there is not exactly one.
func onlySession(t *testing.T, stateDir string) (string, []map[string]any) {
	t.Helper()
	ls := sessionLedgers(t, stateDir)
	if len(ls) != 1 {
		ids := make([]string, 0, len(ls))
		for id := range ls {
			ids = append(ids, id)
		}
		t.Fatalf("want one session ledger under %s, found %d: %v", stateDir, len(ls), ids)
	}
	for id, rs := range ls {
		return id, rs
	}
	return "", nil
}
