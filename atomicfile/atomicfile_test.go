package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func assertPerm(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Fatalf("%s mode %o, want %o", path, got, want)
	}
}

func TestWrite(t *testing.T) {
	for name, write := range map[string]func(string, []byte) error{"Write": Write, "Replace": Replace} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "f.json")
			for _, content := range []string{"first", "second, longer content", "3"} {
				if err := write(p, []byte(content)); err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(p)
				if err != nil || string(got) != content {
					t.Fatalf("read %q, %v; want %q", got, err, content)
				}
				assertPerm(t, p, FilePerm)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != 1 {
				t.Fatalf("temp files left behind: %v", entries)
			}
			if err := write(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
				t.Fatal("write into a missing folder succeeded")
			}
		})
	}
}
