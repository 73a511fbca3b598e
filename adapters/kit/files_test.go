package kit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindFiles(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"a/one.jsonl", "a/b/two.jsonl", "a/skip.txt"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := FindFiles(root, func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
	if err != nil || len(got) != 2 || filepath.Base(got[0]) != "two.jsonl" || filepath.Base(got[1]) != "one.jsonl" {
		t.Errorf("FindFiles = %v, %v; want two.jsonl and one.jsonl in path order", got, err)
	}
	got, err = FindFiles(filepath.Join(root, "missing"), func(string) bool { return true })
	if err != nil || len(got) != 0 {
		t.Errorf("FindFiles of a missing root = %v, %v; want none, no error", got, err)
	}
}
