package testutil

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// SmallTmpfs mounts a tmpfs of size (e.g. "512k") on a temporary folder
// for the test and unmounts it when the test ends. Mounting needs root
// (CI runs as root); without it the test is skipped with skipWhy, which
// should name the tests that cover the same path another way.
func SmallTmpfs(t *testing.T, size, skipWhy string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("not root, so no real tmpfs: " + skipWhy)
	}
	dir := t.TempDir()
	if out, err := exec.CommandContext(t.Context(), "mount", "-t", "tmpfs", "-o", "size="+size+",mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.CommandContext(context.Background(), "umount", "-l", dir).Run() })
	t.Logf("a real tmpfs of %s is mounted at %s", size, dir)
	return dir
}

// FillDisk writes path until its file system is full (ENOSPC).
func FillDisk(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
