package usage

import (
	"bytes"
	"io"

	"github.com/lifeloop/lifeloop/adapters"
)

// A large file whose parser passes over lines by their bytes
// (adapters.UsageLineFilter) is read on two goroutines: one reads it a
// block at a time and keeps the lines the filter keeps, the reader parses
// them in order meanwhile. Most of a session file's bytes are lines no
// call is in (prompts, tool results), so the filter does most of the
// work, and a file alone in a run no longer leaves the second core idle.
const (
	// readAheadMin is the least a file has left to read for it: below it
	// the goroutine and its hand-overs cost more than they save.
	readAheadMin = 8 << 20
	// aheadBlock is how much is read at once; aheadBlocks are in flight.
	aheadBlock  = 256 << 10
	aheadBlocks = 3
)

// aheadBatch is a block's whole lines, as the filter left them.
type aheadBatch struct {
	buf  []byte
	kept []keptLine
	// whole is the length of the block's whole lines (the offset moves
	// by it), read the bytes read into it.
	whole, read int64
	// bad counts the lines the filter found unreadable; firstBad is the
	// first one's offset in the file (-1: none).
	bad, firstBad int64
	// tail is an unfinished last line at the file's end; err a read
	// error. Either ends the file.
	tail []byte
	err  error
	last bool
}

type keptLine struct {
	line []byte
	off  int64
}

// readAhead reads f, whose first byte is at offset start of its file,
// sending each block's batch to out in order (closed after the last);
// batches come back through free for reuse.
func readAhead(f io.Reader, start int64, filter adapters.UsageLineFilter, out chan<- *aheadBatch, free <-chan *aheadBatch) {
	defer close(out)
	var carry []byte // a line begun in the block before
	off := start     // the file offset of the block's first byte
	made := 0
	for {
		var b *aheadBatch
		if made < aheadBlocks {
			b = &aheadBatch{buf: make([]byte, 0, aheadBlock)}
			made++
		} else {
			b = <-free
		}
		b.kept, b.bad, b.firstBad, b.tail, b.err, b.last = b.kept[:0], 0, -1, nil, nil, false
		b.buf = append(b.buf[:0], carry...)
		b.read = 0
		// Read until the block holds a line's end, or the file ends.
		eof := false
		for {
			if cap(b.buf)-len(b.buf) < aheadBlock {
				b.buf = append(b.buf, make([]byte, aheadBlock)...)[:len(b.buf)]
			}
			n, err := f.Read(b.buf[len(b.buf):cap(b.buf)])
			fresh := b.buf[len(b.buf) : len(b.buf)+n]
			b.buf = b.buf[:len(b.buf)+n]
			b.read += int64(n)
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				b.err, b.last = err, true
				out <- b
				return
			}
			if bytes.IndexByte(fresh, '\n') >= 0 {
				break
			}
		}
		whole := bytes.LastIndexByte(b.buf, '\n') + 1
		for rest, at := b.buf[:whole], off; len(rest) > 0; {
			i := bytes.IndexByte(rest, '\n')
			line := rest[:i]
			if len(line) > 0 {
				if kept, err := filter.Kept(line); kept {
					b.kept = append(b.kept, keptLine{line: line, off: at})
				} else if err != nil {
					if b.bad == 0 {
						b.firstBad = at
					}
					b.bad++
				}
			}
			rest, at = rest[i+1:], at+int64(i)+1
		}
		b.whole = int64(whole)
		off += int64(whole)
		carry = append(carry[:0], b.buf[whole:]...)
		if eof {
			if len(carry) > 0 {
				b.tail = carry
			}
			b.last = true
			out <- b
			return
		}
		out <- b
	}
}

// fileAhead is file's loop over the lines read ahead (readAhead): the
// kept lines are parsed and counted in rec; it returns the bytes read,
// the unreadable lines and the first one's offset (-1: none).
func (r *reader) fileAhead(rec *fileRecord, path string, f io.Reader, lf adapters.UsageLineFilter) (read, bad, firstBad int64, err error) {
	out := make(chan *aheadBatch, aheadBlocks-1)
	free := make(chan *aheadBatch, aheadBlocks)
	go readAhead(f, rec.Offset, lf, out, free)
	firstBad = -1
	noteBad := func(at int64) {
		if bad == 0 || at < firstBad {
			firstBad = at
		}
		bad++
	}
	for b := range out {
		read += b.read
		if b.bad > 0 {
			if bad == 0 || b.firstBad < firstBad {
				firstBad = b.firstBad
			}
			bad += b.bad
		}
		for _, k := range b.kept {
			var perr error
			r.entries, perr = lf.ParseKept(r.entries[:0], k.line)
			if perr != nil {
				noteBad(k.off)
			}
			for i := range r.entries {
				r.add(rec, &r.entries[i])
			}
		}
		rec.Offset += b.whole
		if b.tail != nil {
			r.unfinished(rec, path, len(b.tail))
		}
		if b.err != nil {
			err = b.err
		}
		if !b.last {
			free <- b
		}
	}
	return read, bad, firstBad, err
}
