package ledger

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
)

// Report is the result of Verify.
type Report struct {
	Path string `json:"path"`
	// Count is the number of valid receipt lines.
	Count    int    `json:"count"`
	FirstSeq uint64 `json:"first_seq"`
	LastSeq  uint64 `json:"last_seq"`
	// Gaps are missing sequence ranges [from, to], inclusive (a ledger
	// must start at 1).
	Gaps [][2]uint64 `json:"gaps"`
	// Duplicates counts lines whose sequence is not above the previous
	// line's, or whose receipt_id was already seen.
	Duplicates int `json:"duplicates"`
	// TornTail is set when the file ends with bytes after its last
	// newline (a write that was interrupted and not yet repaired).
	TornTail bool `json:"torn_tail"`
	// TornTailBytes is the size of that tail.
	TornTailBytes int64 `json:"torn_tail_bytes"`
	// RecoveredTornBytes is the size of receipts.jsonl.torn: torn tails
	// that were already moved aside by a writer. Not an error by itself.
	RecoveredTornBytes int64 `json:"recovered_torn_bytes"`
	// InvalidLines are 1-based line numbers of lines that are not valid
	// receipts (strict contract decoding).
	InvalidLines []int `json:"invalid_lines"`
	// Problems describe each invalid line, at most maxProblems of them.
	Problems []string `json:"problems"`
	// Warnings are facts worth knowing that do not make the ledger wrong.
	Warnings []string `json:"warnings"`
	// OK is true when there are no gaps, duplicates, invalid lines and no
	// torn tail.
	OK bool `json:"ok"`
}

const maxProblems = 20

// Verify checks the ledger at path: every line a strictly valid receipt,
// sequences 1, 2, 3, ... without gaps or repeats, unique receipt ids, no
// torn tail. It takes a shared lock, so it waits for an append in progress
// and sees whole appends only; it never modifies the ledger. A missing
// ledger is an error wrapping fs.ErrNotExist.
func Verify(path string) (Report, error) {
	rep := Report{Path: path, Gaps: [][2]uint64{}, InvalidLines: []int{}, Problems: []string{}, Warnings: []string{}}
	f, err := os.Open(path)
	if err != nil {
		return rep, err
	}
	defer f.Close()
	if err := flock(f, unix.LOCK_SH); err != nil {
		return rep, fmt.Errorf("lock ledger %s: %w", path, err)
	}
	defer flock(f, unix.LOCK_UN) //nolint:errcheck // closing releases it anyway
	fi, err := f.Stat()
	if err != nil {
		return rep, err
	}
	size := fi.Size()

	seenIDs := make(map[string]struct{})
	var prev uint64
	lineNo := 0
	sc := newLineScanner(io.NewSectionReader(f, 0, size), 0)
	invalid := func(msg string) {
		rep.InvalidLines = append(rep.InvalidLines, lineNo)
		if len(rep.Problems) < maxProblems {
			rep.Problems = append(rep.Problems, fmt.Sprintf("line %d: %s", lineNo, msg))
		}
	}
	for {
		ln, ok := sc.Next()
		if !ok {
			break
		}
		lineNo++
		if ln.TooLong {
			invalid(fmt.Sprintf("%d bytes, longer than the %d-byte limit", ln.Len, MaxLineBytes))
			continue
		}
		r, err := contract.DecodeReceipt(ln.Data)
		if err != nil {
			invalid(err.Error())
			continue
		}
		if r.Sequence == nil || *r.Sequence == 0 {
			invalid("sequence is null or 0; ledger receipts are numbered from 1")
			continue
		}
		seq := *r.Sequence
		rep.Count++
		problem := func(msg string) {
			if len(rep.Problems) < maxProblems {
				rep.Problems = append(rep.Problems, fmt.Sprintf("line %d: %s", lineNo, msg))
			}
		}
		// A line counts once as a duplicate, whether its receipt_id, its
		// sequence or both repeat.
		_, dupID := seenIDs[r.ReceiptID]
		seenIDs[r.ReceiptID] = struct{}{}
		if dupID {
			problem(fmt.Sprintf("receipt_id %s appears again", r.ReceiptID))
		}
		if rep.Count > 1 && seq <= prev {
			rep.Duplicates++
			problem(fmt.Sprintf("sequence %d after %d", seq, prev))
			continue
		}
		if dupID {
			rep.Duplicates++
		}
		switch {
		case rep.Count == 1:
			rep.FirstSeq = seq
			if seq > 1 {
				rep.Gaps = append(rep.Gaps, [2]uint64{1, seq - 1})
			}
		case seq > prev+1:
			rep.Gaps = append(rep.Gaps, [2]uint64{prev + 1, seq - 1})
		}
		prev = seq
		rep.LastSeq = seq
	}
	if err := sc.Err(); err != nil {
		return rep, fmt.Errorf("read ledger %s: %w", path, err)
	}
	if t := sc.Tail(); t > 0 {
		rep.TornTail, rep.TornTailBytes = true, t
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"the last %d bytes are an incomplete line (an interrupted write); the next append moves them to %s",
			t, path+TornSuffix))
	}
	if tfi, err := os.Stat(path + TornSuffix); err == nil && tfi.Size() > 0 {
		rep.RecoveredTornBytes = tfi.Size()
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%d bytes of interrupted writes were moved aside to %s earlier; no complete receipt was lost",
			tfi.Size(), path+TornSuffix))
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("cannot read %s: %v", path+TornSuffix, err))
	}
	rep.OK = len(rep.Gaps) == 0 && rep.Duplicates == 0 && len(rep.InvalidLines) == 0 && !rep.TornTail
	return rep, nil
}
