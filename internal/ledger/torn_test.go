package ledger

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestTornTail(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 10000) // longer than one backward read
	for _, c := range []struct {
		name, data string
		offset, n  int64
	}{
		{"empty", "", 0, 0},
		{"whole lines", "{}\n{}\n", 6, 0},
		{"torn", "{}\n{\"seq", 3, 5},
		{"only a torn line", "{\"seq", 0, 5},
		{"long torn line", "{}\n" + long, 3, 10000},
		{"line after a long one", long + "\n{", 10001, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name)
			if err := os.WriteFile(p, []byte(c.data), 0o600); err != nil {
				t.Fatal(err)
			}
			off, n, err := TornTail(p, time.Second)
			if err != nil || off != c.offset || n != c.n {
				t.Fatalf("TornTail = %d, %d, %v; want %d, %d", off, n, err, c.offset, c.n)
			}
		})
	}
	if off, n, err := TornTail(filepath.Join(dir, "missing"), time.Second); off != 0 || n != 0 || err != nil {
		t.Fatalf("missing ledger: %d, %d, %v", off, n, err)
	}
}

// TestTornTailWaitsForTheWriter: a partial line while a writer holds the
// ledger's lock is an append under way (ErrAppending), not a torn tail;
// once the writer is done it is torn.
func TestTornTailWaitsForTheWriter(t *testing.T) {
	p := filepath.Join(t.TempDir(), "receipts.jsonl")
	if err := os.WriteFile(p, []byte("{}\n{\"seq"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := flock(w, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, n, err := TornTail(p, 50*time.Millisecond); !errors.Is(err, ErrAppending) || n != 0 {
		t.Fatalf("while a writer holds the lock: n %d, err %v; want ErrAppending", n, err)
	}
	if err := flock(w, unix.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if off, n, err := TornTail(p, 50*time.Millisecond); err != nil || off != 3 || n != 5 {
		t.Fatalf("after the writer: %d, %d, %v; want 3, 5", off, n, err)
	}
}
