package usage

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
)

// A file reader reads from its offset to the file's end whatever size
// the listing saw (the file grown or cut since), in reads of any size.
func TestFileReaderReadsToTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	data := strings.Repeat("0123456789abcdef", 1000)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		off, size int64
	}{{0, int64(len(data))}, {0, 10}, {0, 1 << 20}, {100, int64(len(data))}, {int64(len(data)), int64(len(data))}} {
		f, err := openAt(path, c.off, c.size)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(iotest.OneByteReader(f))
		f.close()
		if err != nil || string(got) != data[c.off:] {
			t.Fatalf("offset %d, listed size %d: read %d bytes (%v), want %d", c.off, c.size, len(got), err, len(data)-int(c.off))
		}
		f, _ = openAt(path, c.off, c.size)
		if err := iotest.TestReader(f, []byte(data[c.off:])); err != nil {
			t.Fatalf("offset %d, listed size %d: %v", c.off, c.size, err)
		}
		f.close()
	}
	if _, err := openAt(filepath.Join(t.TempDir(), "gone.jsonl"), 0, 0); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "gone.jsonl") {
		t.Fatalf("opening a missing file: %v", err)
	}
}
