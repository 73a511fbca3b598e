package ledger

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// BenchmarkAppend measures appends per second of frame receipts (which
// do cause syncs) with group commit (the default), an fsync per receipt
// (--durability sync) and none.
func BenchmarkAppend(b *testing.B) {
	for _, mode := range []struct {
		name string
		sync SyncMode
	}{{"group", SyncGroup}, {"fsync", SyncEach}, {"nofsync", SyncNone}} {
		b.Run(mode.name, func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "receipts.jsonl"), Options{Sync: mode.sync})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			r := testReceipt(contract.EventFrameEnded)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := l.Append(r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
		})
	}
}

const bigLedgerSize = 1_000_000

var (
	bigLedgerOnce sync.Once
	bigLedgerPath string
	bigLedgerErr  error
)

// bigLedger writes a 1,000,000-receipt ledger once per benchmark run,
// directly as lines (no Append), into a temp folder TestMain removes.
func bigLedger(b *testing.B) string {
	bigLedgerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ledger-bench-")
		if err != nil {
			bigLedgerErr = err
			return
		}
		bigLedgerPath = filepath.Join(dir, "receipts.jsonl")
		f, err := os.OpenFile(bigLedgerPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			bigLedgerErr = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for i := 1; i <= bigLedgerSize; i++ {
			fmt.Fprintf(w, `{"schema_version":1,"receipt_id":"lfr_%026d","idempotency_key":null,"client_id":"bench","adapter_id":"codex","invocation_id":"inv_bench","event":"supervisor.tick","event_id":"evt_%026d","sequence":%d,"parent_receipt_id":null,"integration_mode":"launcher_wrapper","status":"observed","at_epoch_s":1778100000,"failure_class":null,"retry_class":null}`+"\n", i, i, i)
		}
		if err := w.Flush(); err != nil {
			bigLedgerErr = err
		}
		if err := f.Close(); err != nil && bigLedgerErr == nil {
			bigLedgerErr = err
		}
	})
	if bigLedgerErr != nil {
		b.Fatal(bigLedgerErr)
	}
	return bigLedgerPath
}

// BenchmarkReadSince reads the last 10 receipts of a 1,000,000-receipt
// ledger through ReadSince (binary search over offsets) and through a full
// scan, so the ratio is visible.
func BenchmarkReadSince(b *testing.B) {
	path := bigLedger(b)
	since := uint64(bigLedgerSize - 10)
	b.Run("binary-search", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n := 0
			for _, err := range ReadSince(path, since) {
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			if n != 10 {
				b.Fatalf("read %d receipts, want 10", n)
			}
		}
	})
	b.Run("full-scan", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			fi, _ := f.Stat()
			// The cheapest honest full scan: every line's head is parsed
			// to find its sequence; only the wanted lines are decoded.
			n := 0
			sc := newLineScanner(f, 0)
			for {
				ln, ok := sc.Next()
				if !ok {
					break
				}
				h, err := parseHead(ln.Data)
				if err != nil {
					b.Fatal(err)
				}
				if *h.Sequence > since {
					if _, err := decodeEntry(ln); err != nil {
						b.Fatal(err)
					}
					n++
				}
			}
			f.Close()
			_ = fi
			if n != 10 {
				b.Fatalf("read %d receipts, want 10", n)
			}
		}
	})
}

// BenchmarkOpen opens the 1,000,000-receipt ledger: the one full read a
// writer does to learn the last sequence and the idempotency index.
func BenchmarkOpen(b *testing.B) {
	path := bigLedger(b)
	for i := 0; i < b.N; i++ {
		l, err := Open(path, Options{Sync: SyncNone})
		if err != nil {
			b.Fatal(err)
		}
		if l.LastSequence() != bigLedgerSize {
			b.Fatalf("LastSequence = %d", l.LastSequence())
		}
		l.Close()
	}
}
