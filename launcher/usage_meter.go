package launcher

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/pricing"
	"github.com/lifeloop/lifeloop/internal/usage"
	"github.com/lifeloop/lifeloop/telemetry"
)

// usageMeter counts the tokens and cost of a wrapped session's model
// calls (docs/contract.md, "Usage travels on frame ends"). The telemetry
// watcher names the files it follows (noteFile); the meter reads them
// itself through the adapter's UsageParser, from where the watcher
// started, each time a turn or the session ends, so a frame.ended counts
// every call its harness wrote before it, however far the watcher got.
// The reading runs on a goroutine of the meter's, never on the
// supervisor loop that asks for it (usage_meter_read.go).
type usageMeter struct {
	reader adapters.UsageReader
	// store is set instead of reader for a harness whose usage lives in
	// a database: the noted paths are its telemetry's sessions, read
	// through it from the telemetry's offset (usage_meter_store.go).
	store  adapters.UsageStore
	pricer *pricing.Pricer

	mu sync.Mutex // guards what follows: the watcher notes files, the reading counts, the loop takes
	// since drops calls before the launch of the harness a file is noted
	// under (a resumed session's earlier turns).
	since time.Time
	files map[string]*usageFile
	seen  map[string]struct{}
	// pending are the calls no turn's end took yet; sessions the calls
	// of each harness session, in the order first seen.
	pending  []meteredCall
	sessions map[string]modelSums
	order    []string
	// The files are read off the loop (usage_meter_read.go): asked
	// counts the readings asked for, done the last one a finished
	// reading covered, reading says one runs, and changed is closed
	// (and replaced) each time one finishes.
	asked, done uint64
	reading     bool
	changed     chan struct{}
	// callBy, when set, is how long the reading reads again while no
	// call is pending (a turn's end waits for its call).
	callBy time.Time
}

// usageFile is one followed file: where reading resumes, its usage
// parser, and a telemetry parser of its own that tells which turn each
// line is in (frame: the turn the latest prompt opened).
type usageFile struct {
	offset int64
	since  time.Time
	parser adapters.UsageParser
	turns  telemetry.Parser
	frame  string
	obs    []telemetry.Observation
}

// meteredCall is a call counted: its frame (the harness's id of the
// turn, "" when the file gives none), model and sums.
type meteredCall struct {
	frame, model string
	sums         usage.Sums
}

// modelSums are calls summed by model.
type modelSums map[string]*usage.Sums

// newUsageMeter returns the meter of ad's harness, nil when its files
// record no usage. The user's price file is found through env; one that
// cannot be read is logged and the embedded table used.
func newUsageMeter(ad *adapters.Adapter, env []string, log *slog.Logger) *usageMeter {
	r, ok := ad.Harness().(adapters.UsageReader)
	st, isStore := ad.Harness().(adapters.UsageStore)
	if !ok && !isStore {
		return nil
	}
	p, err := pricing.New(pricing.UserFile(envLookup(env)))
	if err != nil {
		log.Warn("usage: the user price file is not used", "err", err)
		p, _ = pricing.New("")
	}
	if p == nil {
		return nil
	}
	if ok {
		st = nil
	}
	return &usageMeter{reader: r, store: st, pricer: p, files: map[string]*usageFile{}, seen: map[string]struct{}{}, sessions: map[string]modelSums{}, changed: make(chan struct{})}
}

// envLookup looks a variable up in env (KEY=value lines, the last wins).
func envLookup(env []string) func(string) string {
	return func(k string) string {
		v := ""
		for _, kv := range env {
			if len(kv) > len(k) && kv[len(k)] == '=' && kv[:len(k)] == k {
				v = kv[len(k)+1:]
			}
		}
		return v
	}
}

// launched marks a harness launch: calls of files noted from now on
// count from at.
func (u *usageMeter) launched(at time.Time) {
	u.mu.Lock()
	u.since = at.Truncate(time.Millisecond)
	u.mu.Unlock()
}

// noteFile records that the watcher reads path from offset on, with
// parsers from newParser.
func (u *usageMeter) noteFile(path string, offset int64, newParser func() telemetry.Parser) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.files[path]; ok {
		return
	}
	if u.store != nil {
		u.files[path] = &usageFile{offset: offset, since: u.since}
		return
	}
	u.files[path] = &usageFile{offset: offset, since: u.since, parser: u.reader.NewUsageParser(path, nil), turns: newParser()}
}

// read appends the calls of path's complete lines past f.offset to dst.
func (f *usageFile) read(path string, dst []adapters.UsageEntry) []adapters.UsageEntry {
	fh, err := os.Open(path)
	if err != nil {
		return dst
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil || st.Size() <= f.offset {
		return dst
	}
	b := make([]byte, st.Size()-f.offset)
	n, err := fh.ReadAt(b, f.offset)
	if err != nil && err != io.EOF {
		return dst
	}
	b = b[:n]
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return dst
	}
	at := f.offset
	for line := range bytes.SplitSeq(b[:end], []byte("\n")) {
		if len(bytes.TrimSpace(line)) > 0 {
			f.obs, _ = f.turns.Parse(f.obs[:0], line, telemetry.Provenance{Path: path, Offset: at, Kind: f.turns.SourceKind()})
			for _, o := range f.obs {
				if o.Kind == telemetry.ObsFrameOpening && o.ParentFrameID == "" {
					f.frame = o.FrameID
				}
			}
			n := len(dst)
			dst, _ = f.parser.Parse(dst, line) // a line it cannot read counts nothing
			for i := n; i < len(dst); i++ {
				dst[i].FrameID = f.frame
			}
		}
		at += int64(len(line)) + 1
	}
	f.offset += int64(end) + 1
	return dst
}

// count adds call e, once per identity, to the turn and its session.
func (u *usageMeter) count(e adapters.UsageEntry) {
	if e.Key != "" {
		if _, dup := u.seen[e.Key]; dup {
			return
		}
		u.seen[e.Key] = struct{}{}
	}
	var s usage.Sums
	s.Calls = 1
	s.Tokens = e.Tokens
	switch {
	case e.HasCost:
		s.Native, s.NativeCalls = e.Cost, 1
	default:
		t := pricing.Tokens{Input: e.Tokens.Input, CacheRead: e.Tokens.CacheRead, CacheWrite: e.Tokens.CacheWrite, Output: e.Tokens.Output}
		if usd, ok := u.pricer.Cost(e.Provider, e.Model, e.At, t); ok {
			s.Estimated, s.EstimatedCalls = usd, 1
		} else {
			s.UnknownCalls = 1
		}
	}
	u.pending = append(u.pending, meteredCall{frame: e.FrameID, model: e.Model, sums: s})
	ss := u.sessions[e.SessionID]
	if ss == nil {
		ss = modelSums{}
		u.sessions[e.SessionID] = ss
		u.order = append(u.order, e.SessionID)
	}
	ss.add(e.Model, &s)
}

// turnEnded returns the usage block of turn frame's calls, nil when
// there were none: the calls written after its prompt and before the
// next (with those before any prompt), else — the receipt's frame id is
// not the file's — every call no turn took yet. It waits for a reading
// of the files asked now, which reads again for turnUsageWait at most
// while it finds no call.
func (u *usageMeter) turnEnded(frame string) map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	// A hook can end a turn before the harness wrote the turn's last
	// call to its file (seen with one harness): the reading gives the
	// file turnUsageWait while it finds no call.
	u.callBy = time.Now().Add(turnUsageWait)
	u.readLocked(u.readWait() + turnUsageWait)
	u.callBy = time.Time{}
	named := slices.ContainsFunc(u.pending, func(c meteredCall) bool { return c.frame == frame })
	t := modelSums{}
	rest := u.pending[:0]
	for _, c := range u.pending {
		if !named || c.frame == frame || c.frame == "" {
			t.add(c.model, &c.sums)
		} else {
			rest = append(rest, c)
		}
	}
	u.pending = rest
	if len(t) == 0 {
		return nil
	}
	return t.block()
}

// turnUsageWait bounds how long a turn's reading waits for a call to
// read, reading again every turnUsagePoll, when none was written yet.
const (
	turnUsageWait = 300 * time.Millisecond
	turnUsagePoll = 25 * time.Millisecond
)

// sessionEnded returns the wrapped session's usage block with each
// harness session's, nil when no call was read.
func (u *usageMeter) sessionEnded() map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.readLocked(u.readWait())
	return u.totalLocked()
}

// soFar is the session's usage block so far (nil: no call yet, or no
// meter).
func (u *usageMeter) soFar() map[string]any {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.readLocked(u.readWait())
	return u.totalLocked()
}

func (u *usageMeter) totalLocked() map[string]any {
	if len(u.order) == 0 {
		return nil
	}
	all := modelSums{}
	per := make([]any, 0, len(u.order))
	for _, id := range u.order {
		ss := u.sessions[id]
		for m, s := range ss {
			all.add(m, s)
		}
		b := ss.block()
		b["harness_session_id"] = id
		per = append(per, b)
	}
	b := all.block()
	b["harness_sessions"] = per
	return b
}

// telemetry wraps t so that every file its watcher reads is noted.
func (u *usageMeter) telemetry(t adapters.Telemetry) adapters.Telemetry {
	if u == nil || t == nil {
		return t
	}
	return usageTelemetry{Telemetry: t, u: u}
}

// usageTelemetry is a harness's telemetry whose parsers note their files.
type usageTelemetry struct {
	adapters.Telemetry
	u *usageMeter
}

func (t usageTelemetry) TelemetrySource(tt adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src, err := t.Telemetry.TelemetrySource(tt)
	if err != nil || src.NewParser == nil {
		return src, err
	}
	inner := src.NewParser
	src.NewParser = func() telemetry.Parser { return &usageNoter{Parser: inner(), u: t.u, newParser: inner} }
	return src, nil
}

// usageNoter is a harness's parser that notes its file on its first line.
type usageNoter struct {
	telemetry.Parser
	u         *usageMeter
	newParser func() telemetry.Parser
	noted     string
}

func (p *usageNoter) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	if src.Path != "" && src.Path != p.noted {
		p.u.noteFile(src.Path, src.Offset, p.newParser)
		p.noted = src.Path
	}
	return p.Parser.Parse(dst, line, src)
}
