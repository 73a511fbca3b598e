package notify

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestMain checks that no notifier leaves a goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// since is the start of the episodes the tests announce.
var since = time.Date(2026, 12, 2, 15, 4, 5, 678_000_000, time.UTC)

// episode is episode id of kind in a test session.
func episode(id int, kind string) Episode {
	return Episode{Session: "lls_test", Harness: "fakeharness", Cwd: "/work/proj", ID: id, Kind: kind,
		Source: "hook", Evidence: "PermissionRequest", Detail: "Bash: ls -la", Turn: 2, Since: since}
}

// logger is a logger whose text the test reads.
func logger() (*slog.Logger, *testutil.SyncBuffer) {
	var buf testutil.SyncBuffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

// testEnv is a small environment for notifier programs: PATH, the test's
// folder as NOTIFY_TEST_DIR, and extra.
func testEnv(dir string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "NOTIFY_TEST_DIR=" + dir}, extra...)
}

// lines is the file's lines ("" lines left out); none when it is absent.
func lines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(data))
}

// script writes an executable sh script into dir.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}
