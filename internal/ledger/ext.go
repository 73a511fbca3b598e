package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// extStore is receipts.ext.jsonl: one line per receipt appended with an
// external sequence, {"seq":<ledger sequence>,"scope":...,"ext":<external
// sequence>}, in ledger order. It is written before the receipt itself,
// under the ledger lock, so an entry whose seq is beyond the ledger's last
// sequence belongs to a receipt that never made it (its writer died) and
// is dropped on the next refresh.
type extStore struct {
	f    *os.File
	path string
	end  int64
	last map[string]uint64 // scope → highest external sequence
}

type extEntry struct {
	Seq   uint64 `json:"seq"`
	Scope string `json:"scope"`
	Ext   uint64 `json:"ext"`
}

// openExt opens the store if its file exists; the file is created by the
// first record, so ledgers without external sequences have none.
func openExt(path string) (*extStore, error) {
	x := &extStore{path: path, last: make(map[string]uint64)}
	if err := x.open(false); err != nil {
		return nil, err
	}
	return x, nil
}

func (x *extStore) open(create bool) error {
	if x.f != nil {
		return nil
	}
	flags := os.O_RDWR | os.O_APPEND
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(x.path, flags, 0o600)
	if errors.Is(err, fs.ErrNotExist) && !create {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open external sequence index: %w", err)
	}
	x.f = f
	return nil
}

func (x *extStore) close() error {
	if x.f == nil {
		return nil
	}
	err := x.f.Close()
	x.f = nil
	return err
}

// refresh reads entries appended since the last refresh. Entries for
// sequences beyond ledgerLast, and a torn last line, are cut off. The
// caller holds the ledger lock.
func (x *extStore) refresh(ledgerLast uint64, sync bool) error {
	if err := x.open(false); err != nil || x.f == nil {
		return err // another process may create it later
	}
	fi, err := x.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", x.path, err)
	}
	size := fi.Size()
	if size < x.end {
		x.end, x.last = 0, make(map[string]uint64)
	}
	if size == x.end {
		return nil
	}
	sc := newLineScanner(io.NewSectionReader(x.f, x.end, size-x.end), x.end)
	cut := int64(-1)
	for {
		ln, ok := sc.Next()
		if !ok {
			break
		}
		var e extEntry
		if ln.TooLong || json.Unmarshal(ln.Data, &e) != nil {
			continue // not ours to interpret; keep going
		}
		if e.Seq > ledgerLast {
			cut = ln.Offset
			break
		}
		if e.Ext > x.last[e.Scope] || !x.has(e.Scope) {
			x.last[e.Scope] = e.Ext
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read %s: %w", x.path, err)
	}
	if cut < 0 && sc.Tail() > 0 {
		cut = sc.Offset()
	}
	if cut >= 0 {
		if err := x.f.Truncate(cut); err != nil {
			return fmt.Errorf("truncate %s: %w", x.path, err)
		}
		if sync {
			if err := x.f.Sync(); err != nil {
				return fmt.Errorf("fsync %s: %w", x.path, err)
			}
		}
		x.end = cut
		return nil
	}
	x.end = sc.Offset()
	return nil
}

func (x *extStore) has(scope string) bool {
	_, ok := x.last[scope]
	return ok
}

// record appends an entry; the caller holds the ledger lock and writes the
// receipt with sequence seq right after. The entry reaches the disk with
// the ledger's own sync (syncFiles flushes this file too).
func (x *extStore) record(scope string, ext, seq uint64) error {
	if err := x.open(true); err != nil {
		return err
	}
	b, err := json.Marshal(extEntry{Seq: seq, Scope: scope, Ext: ext})
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := x.f.Write(b); err != nil {
		return fmt.Errorf("append to %s: %w", x.path, err)
	}
	x.end += int64(len(b))
	if ext > x.last[scope] || !x.has(scope) {
		x.last[scope] = ext
	}
	return nil
}
