package usage

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"unsafe"
)

// The index on disk: a magic, the version, then varint-framed fields in
// a fixed order, with no field names or type descriptions to decode;
// then the identities, 12 bytes each (the identity and its record's
// position, little-endian) in order of identity; then a trailer, where
// the identities begin and how many there are (8 bytes each). A run
// reads the part before the identities, into one string its records'
// strings are slices of, so a run with nothing new decodes 10,000
// records in a few milliseconds; the identities are read, in order, only
// by a run that merges them with its own (identities.go).
const indexMagic = "lifeloop-usage-index\n"

// keySize is an identity's size on disk; trailerSize the trailer's.
const (
	keySize     = 12
	trailerSize = 16
)

var errIndexDamaged = errors.New("damaged")

// writeIndex writes x's records to w, a buffer's worth at a time, then
// the identities keys gives (in order; ok false after the last).
func writeIndex(w io.Writer, x *index, recs []*fileRecord, keys func() (key uint64, pos int32, ok bool)) error {
	e := encoder{b: make([]byte, 0, encodeChunk+1024), w: w}
	e.b = append(e.b, indexMagic...)
	e.uint(indexVersion)
	e.str(x.Prices)
	e.str(x.Zone)
	e.uint(uint64(len(recs)))
	for _, r := range recs {
		e.str(r.Path)
		e.str(r.Harness)
		e.int(r.Size)
		e.int(r.ModTime)
		e.int(r.Offset)
		e.str(string(r.State))
		e.str(r.Reported)
		e.int(r.BadLines)
		e.uint(uint64(len(r.Buckets)))
		for i := range r.Buckets {
			k, s := &r.Buckets[i].Key, &r.Buckets[i].Sums
			e.str(k.Day)
			e.str(k.Session)
			e.str(k.Model)
			e.str(k.Project)
			e.int(s.Calls)
			e.int(s.Tokens.Input)
			e.int(s.Tokens.CacheRead)
			e.int(s.Tokens.CacheWrite)
			e.int(s.Tokens.Output)
			e.int(s.Tokens.Reasoning)
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(s.Native))
			e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(s.Estimated))
			e.int(s.NativeCalls)
			e.int(s.EstimatedCalls)
			e.int(s.UnknownCalls)
			e.flushFull()
		}
		e.flushFull()
	}
	keysAt := e.written + int64(len(e.b))
	var n uint64
	for {
		k, pos, ok := keys()
		if !ok {
			break
		}
		e.b = binary.LittleEndian.AppendUint64(e.b, k)
		e.b = binary.LittleEndian.AppendUint32(e.b, uint32(pos))
		n++
		e.flushFull()
	}
	e.b = binary.LittleEndian.AppendUint64(e.b, uint64(keysAt))
	e.b = binary.LittleEndian.AppendUint64(e.b, n)
	e.flush()
	return e.err
}

// readIndexFile reads the part of an index file before its identities
// and returns where the identities are.
func readIndexFile(f *os.File) (*indexKeys, []byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	if size < int64(len(indexMagic))+trailerSize {
		return nil, nil, errIndexDamaged
	}
	var t [trailerSize]byte
	if _, err := f.ReadAt(t[:], size-trailerSize); err != nil {
		return nil, nil, err
	}
	at, n := binary.LittleEndian.Uint64(t[:]), binary.LittleEndian.Uint64(t[8:])
	if at > uint64(size) || n > uint64(size)/keySize || at+n*keySize+trailerSize != uint64(size) {
		return nil, nil, errIndexDamaged
	}
	head := make([]byte, at)
	if _, err := f.ReadAt(head, 0); err != nil {
		return nil, nil, err
	}
	return &indexKeys{records: records{f: f, off: int64(at), left: int64(n), size: keySize}}, head, nil
}

// indexFileVersion is the version an index file's head names, when it
// has the head.
func indexFileVersion(f *os.File) (uint64, bool) {
	b := make([]byte, len(indexMagic)+binary.MaxVarintLen64)
	n, _ := f.ReadAt(b, 0)
	if b = b[:n]; len(b) < len(indexMagic) || string(b[:len(indexMagic)]) != indexMagic {
		return 0, false
	}
	v, m := binary.Uvarint(b[len(indexMagic):])
	return v, m > 0
}

// indexKeys are an index file's identities, read in order as a
// pairSource (b: indexTag and the record's position). An identity out
// of order ends them as damaged.
type indexKeys struct {
	records
	last uint64
}

func (k *indexKeys) next() (pair, bool) {
	b, ok := k.records.next()
	if !ok {
		return pair{}, false
	}
	key := binary.LittleEndian.Uint64(b)
	if key < k.last {
		k.e, k.buf, k.left = errIndexDamaged, k.buf[:0], 0
		return pair{}, false
	}
	k.last = key
	return pair{key, indexTag | uint64(binary.LittleEndian.Uint32(b[8:]))}, true
}

func (k *indexKeys) err() error { return k.e }

// encodeChunk is how many encoded bytes writeIndex gathers before it
// writes them.
const encodeChunk = 64 << 10

// decodeIndexHead reads the version, prices and zone of data; d is then
// at the records.
func decodeIndexHead(data string) (d decoder, version uint64, prices, zone string, err error) {
	if len(data) < len(indexMagic) || data[:len(indexMagic)] != indexMagic {
		return d, 0, "", "", errIndexDamaged
	}
	d = decoder{s: data[len(indexMagic):]}
	version = d.uint()
	prices, zone = d.str(), d.str()
	return d, version, prices, zone, d.err
}

// slab is the number of buckets allocated at once for the records.
const slab = 4096

// records reads the records that follow the head. Their buckets are
// cut from a few large slices (each record's capped, so growing one
// copies it), not allocated one record at a time.
func (d *decoder) records() ([]*fileRecord, error) {
	n := d.count(8)
	recs := make([]fileRecord, n)
	out := make([]*fileRecord, n)
	var buckets []bucket
	for i := range recs {
		r := &recs[i]
		r.Path, r.Harness = d.str(), d.str()
		r.Size, r.ModTime, r.Offset = d.int(), d.int(), d.int()
		if st := d.str(); st != "" {
			r.State = []byte(st)
		}
		r.Reported = d.str()
		r.BadLines = d.int()
		nb := d.count(16)
		if cap(buckets)-len(buckets) < nb {
			buckets = make([]bucket, 0, max(nb, min(n-i, slab)))
		}
		r.Buckets = buckets[len(buckets) : len(buckets)+nb : len(buckets)+nb]
		buckets = buckets[:len(buckets)+nb]
		for j := range r.Buckets {
			k, s := &r.Buckets[j].Key, &r.Buckets[j].Sums
			k.Day, k.Session, k.Model, k.Project = d.str(), d.str(), d.str(), d.str()
			s.Calls = d.int()
			s.Tokens.Input, s.Tokens.CacheRead, s.Tokens.CacheWrite = d.int(), d.int(), d.int()
			s.Tokens.Output, s.Tokens.Reasoning = d.int(), d.int()
			s.Native, s.Estimated = math.Float64frombits(d.u64()), math.Float64frombits(d.u64())
			s.NativeCalls, s.EstimatedCalls, s.UnknownCalls = d.int(), d.int(), d.int()
		}
		r.loadedAt = int32(i) + 1
		if d.err != nil {
			return nil, d.err
		}
		out[i] = r
	}
	if d.err == nil && d.s != "" {
		return nil, errIndexDamaged // trailing bytes
	}
	return out, d.err
}

// encoder encodes fields into b, which flush writes to w.
type encoder struct {
	b       []byte
	w       io.Writer
	written int64 // bytes written to w
	err     error // the first write's error
}

// flushFull writes b when it holds a chunk's worth.
func (e *encoder) flushFull() {
	if len(e.b) >= encodeChunk {
		e.flush()
	}
}

func (e *encoder) flush() {
	if e.err == nil && len(e.b) > 0 {
		_, e.err = e.w.Write(e.b)
		e.written += int64(len(e.b))
	}
	e.b = e.b[:0]
}

func (e *encoder) uint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *encoder) int(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *encoder) str(s string) {
	e.uint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// decoder reads an index's fields; the first error sticks and every
// later read gives zero.
type decoder struct {
	s   string
	err error
}

func (d *decoder) fail() {
	d.err, d.s = errIndexDamaged, ""
}

func (d *decoder) uint() uint64 {
	v, n := binary.Uvarint(unsafe.Slice(unsafe.StringData(d.s), len(d.s)))
	if n <= 0 {
		d.fail()
		return 0
	}
	d.s = d.s[n:]
	return v
}

func (d *decoder) int() int64 {
	v, n := binary.Varint(unsafe.Slice(unsafe.StringData(d.s), len(d.s)))
	if n <= 0 {
		d.fail()
		return 0
	}
	d.s = d.s[n:]
	return v
}

func (d *decoder) u64() uint64 {
	if len(d.s) < 8 {
		d.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(d.s), 8))
	d.s = d.s[8:]
	return v
}

func (d *decoder) str() string {
	n := d.uint()
	if n > uint64(len(d.s)) {
		d.fail()
		return ""
	}
	s := d.s[:n]
	d.s = d.s[n:]
	return s
}

// count reads a number of items each at least min bytes long, failing
// when the rest of the data cannot hold them.
func (d *decoder) count(min uint64) int {
	n := d.uint()
	if n > uint64(len(d.s))/min+1 {
		d.fail()
		return 0
	}
	return int(n)
}
