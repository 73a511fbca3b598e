package codex

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
)

// SourceRollout is the kind of Codex's session file, the rollout.
const SourceRollout telemetry.SourceKind = "rollout"

// TelemetrySource implements adapters.Telemetry: the rollouts under
// $CODEX_HOME (else $HOME/.codex) of the harness environment.
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src := adapters.TelemetrySource{Kind: SourceRollout}
	home := envHome(t.Env)
	if home == "" {
		return src, errors.New("telemetry: neither CODEX_HOME nor HOME is set in the harness environment; cannot find Codex's rollouts")
	}
	src.Discoverer = &Discoverer{Home: home, Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID, Now: t.Now}
	src.NewParser = func() telemetry.Parser { return NewParser() }
	return src, nil
}

// Discoverer finds the rollout of a Codex launch:
// <Home>/sessions/YYYY/MM/DD/rollout-*.jsonl born at or after Launch-Slack
// whose first line (session_meta) records Cwd. When SessionID (the thread
// id) is known, payload.id must equal it. Concurrent launches in one
// folder are kept apart by telemetry.Claims (each takes the oldest file
// nobody else holds).
type Discoverer struct {
	Home      string // CODEX_HOME, else ~/.codex (resolved by the caller)
	Cwd       string
	Launch    time.Time
	Slack     time.Duration // default: telemetry.BornBefore's
	SessionID string
	// Now returns the current time (default time.Now); it bounds which
	// date folders are scanned.
	Now func() time.Time
}

// Roots implements telemetry.Discoverer.
func (c *Discoverer) Roots() []string { return []string{filepath.Join(c.Home, "sessions")} }

// SourceKind implements telemetry.Discoverer.
func (c *Discoverer) SourceKind() telemetry.SourceKind { return SourceRollout }

// Candidates implements telemetry.Discoverer. Only the date folders from
// the day before Launch to the day after now (local and UTC) are scanned;
// every one when Launch is zero (a resumed session of any age).
func (c *Discoverer) Candidates() ([]telemetry.Candidate, error) {
	days := c.days()
	if c.Launch.IsZero() {
		// Any age (a resumed session): every date folder.
		dirs, _ := filepath.Glob(filepath.Join(c.Home, "sessions", "*", "*", "*"))
		for _, d := range dirs {
			if rel, err := filepath.Rel(filepath.Join(c.Home, "sessions"), d); err == nil {
				days[filepath.ToSlash(rel)] = true
			}
		}
	}
	cwds := telemetry.CwdSpellings(c.Cwd)
	var out []telemetry.Candidate
	for day := range days {
		dir := filepath.Join(c.Home, "sessions", filepath.FromSlash(day))
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			if t, ok := nameTime(name); ok && !c.Launch.IsZero() && telemetry.BornBefore(t, c.Launch, c.Slack) {
				continue // named before the launch: no stat of a day's many rollouts
			}
			p := filepath.Join(dir, name)
			born, ok := telemetry.BornAt(p)
			if !ok || (!c.Launch.IsZero() && telemetry.BornBefore(born, c.Launch, c.Slack)) {
				continue
			}
			id, cwd, ok := meta(p)
			if !ok || !slices.Contains(cwds, cwd) || (c.SessionID != "" && id != c.SessionID) {
				continue
			}
			out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: id})
		}
	}
	telemetry.SortCandidates(out)
	return out, nil
}

// days are the date folders (YYYY/MM/DD) a rollout of this launch can be
// in: from the day before Launch to the day after now, in local time and
// UTC; none when Launch is zero.
func (c *Discoverer) days() map[string]bool {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	days := map[string]bool{}
	for d := c.Launch.Add(-24 * time.Hour); !c.Launch.IsZero() && !d.After(now().Add(24*time.Hour)); d = d.Add(12 * time.Hour) {
		days[d.Local().Format("2006/01/02")] = true
		days[d.UTC().Format("2006/01/02")] = true
	}
	return days
}

// SkipFolder implements telemetry.FolderSkipper: a year, month or day
// folder outside days is skipped, so the watchers' cost does not grow
// with the days of rollouts Codex keeps. Nothing is skipped for a session
// of any age (Launch zero) or a folder that is not a date.
func (c *Discoverer) SkipFolder(dir string) bool {
	if c.Launch.IsZero() {
		return false
	}
	rel, err := filepath.Rel(filepath.Join(c.Home, "sessions"), dir)
	if err != nil {
		return false
	}
	rel = filepath.ToSlash(rel)
	if n := strings.Count(rel, "/"); n > 2 || len(rel) != len("2006/01/02")-3*(2-n) ||
		strings.Trim(rel, "0123456789/") != "" {
		return false // deeper than a day, or not a date's shape
	}
	for day := range c.days() {
		if strings.HasPrefix(day, rel) {
			return false
		}
	}
	return true
}

// nameTime is the time in a rollout's name,
// rollout-<local time>-<thread id>.jsonl, when the thread id is a UUIDv7
// (its first 48 bits are the Unix time in milliseconds of the thread's
// start, which precedes the file's birth); ok is false for any other name.
func nameTime(name string) (time.Time, bool) {
	id, ok := strings.CutSuffix(name, ".jsonl")
	if !ok || len(id) < 36 {
		return time.Time{}, false
	}
	id = id[len(id)-36:]
	if id[8] != '-' || id[13] != '-' || id[14] != '7' || id[18] != '-' || id[23] != '-' || !strings.ContainsRune("89ab", rune(id[19])) {
		return time.Time{}, false
	}
	ms, err := strconv.ParseUint(id[:8]+id[9:13], 16, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)), true
}

// meta reads the session_meta of a rollout's first line.
func meta(path string) (id, cwd string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) || len(line) > telemetry.DefaultMaxLine {
			return "", "", false // no complete first line yet: try again later
		}
	}
	var l struct {
		Type    string `json:"type"`
		Payload struct {
			ID  string `json:"id"`
			Cwd string `json:"cwd"`
		} `json:"payload"`
	}
	if json.Unmarshal(line, &l) != nil || l.Type != "session_meta" {
		return "", "", false
	}
	return l.Payload.ID, l.Payload.Cwd, true
}

// Parser reads Codex rollout lines ({timestamp, type, payload}).
//
// Rules:
//   - session_meta: ObsHarnessSession with payload.id (the thread id) and
//     payload.cwd.
//   - turn_context: remembers payload.model for later usage.
//   - event_msg task_started: ObsFrameOpening then ObsFrameOpened, FrameID
//     = turn_id, Window = model_context_window.
//   - event_msg user_message: ObsUserMessage in the open turn (no text).
//   - event_msg token_count: ObsUsage, Tokens =
//     info.last_token_usage.total_tokens, Window = info.model_context_window
//     (already the effective window). A token_count identical to the
//     previous one is not reported again.
//   - event_msg task_complete: ObsFrameEnded (Trigger "task_complete");
//     turn_aborted: ObsFrameEnded (Trigger "aborted").
//   - compacted: ObsCompacted with Trigger "auto". PreTokens is the context
//     in use before compaction: the last token_count, skipping the one
//     produced by the summary request itself (the token_usage_record whose
//     response_id equals compacted.compaction_response_id). PostTokens is
//     the first token_count after the compacted line, so the observation is
//     held back until that token_count (or the end of the turn, or the
//     next compaction, where PostTokens stays 0 = unknown) arrives.
//
// Reading a line: one pass over its bytes (telemetry.JSONScan) checks it
// and picks out the fields above; everything else (instructions, tool
// output, reasoning) is only checked. A line that pass does not take as
// the usual shape (not valid JSON, a field of an unexpected type, a key
// spelled in another case or with an escape, a field given twice) is
// decoded with encoding/json as a whole instead, so both ways read every
// line alike. Timestamps are parsed only for lines that report something.
type Parser struct {
	sessionID string
	version   string // session_meta's cli_version: the Codex that wrote the rollout
	model     string
	turn      string
	window    int64

	lastRespID  string // response_id of the latest token_usage_record
	prevTotal   int64  // previous token_count total (last_token_usage)
	lastTotal   int64
	lastRespFor string // response id the lastTotal token_count belongs to
	lastCum     int64  // total_token_usage.total_tokens of the latest token_count
	haveCount   bool

	pending *telemetry.Observation // compaction waiting for its post tokens

	scan telemetry.JSONScan
	l    fastLine
}

// NewParser returns a parser for Codex rollouts.
func NewParser() *Parser { return &Parser{} }

// SourceKind implements telemetry.Parser.
func (p *Parser) SourceKind() telemetry.SourceKind { return SourceRollout }

type rolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type usage struct {
	TotalTokens int64 `json:"total_tokens"`
}

type payload struct {
	Type               string `json:"type"`
	ID                 string `json:"id"`
	Cwd                string `json:"cwd"`
	Model              string `json:"model"`
	TurnID             string `json:"turn_id"`
	ResponseID         string `json:"response_id"`
	ModelContextWindow int64  `json:"model_context_window"`
	CompactionRespID   string `json:"compaction_response_id"`
	CLIVersion         string `json:"cli_version"`
	Info               *struct {
		Total              usage `json:"total_token_usage"`
		Last               usage `json:"last_token_usage"`
		ModelContextWindow int64 `json:"model_context_window"`
	} `json:"info"`
}

// fastLine is what the parser reads of a rollout line. Byte fields point
// into the line (or hold a decoded copy) and live until the next line.
type fastLine struct {
	timestamp, typ []byte
	// payload
	plType, id, cwd, model, turnID, responseID, compactionRespID, cliVersion []byte
	window                                                                   int64
	hasInfo                                                                  bool
	lastRead                                                                 bool // info.last_token_usage names total_tokens
	infoTotal, infoLast, infoWindow                                          int64
	// The usage objects whole, for `lifeloop usage`: set only by the one
	// pass (onePass), present when the object is not null.
	totalUse, lastUse       tokenUsage
	hasTotalUse, hasLastUse bool
	onePass                 bool
}

var (
	lineKeys    = []string{"timestamp", "type", "payload"}
	payloadKeys = []string{"type", "id", "cwd", "model", "turn_id", "response_id", "model_context_window", "compaction_response_id", "info", "cli_version"}
	infoKeys    = []string{"total_token_usage", "last_token_usage", "model_context_window"}
	usageKeys   = []string{"total_tokens", "input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens", "reasoning_output_tokens"}
)

// scanLine reads data into l in one pass; false leaves the line to
// encoding/json.
func scanLine(s *telemetry.JSONScan, l *fastLine, data []byte) bool {
	*l = fastLine{}
	s.Reset(data)
	if !s.Object() {
		return false
	}
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "timestamp":
			s.Once(&seen, 1)
			s.TextTo(&l.timestamp)
		case "type":
			s.Once(&seen, 2)
			s.TextTo(&l.typ)
		case "payload":
			s.Once(&seen, 4)
			if s.Peek() == '{' {
				scanPayload(s, l)
			} else {
				s.Skip() // kept raw and not decoded
			}
		default:
			s.UnreadKey(key, plain, lineKeys)
			s.Skip()
		}
	}
	return s.End() && len(l.typ) > 0
}

func scanPayload(s *telemetry.JSONScan, l *fastLine) {
	s.Object()
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "type":
			s.Once(&seen, 1)
			s.TextTo(&l.plType)
		case "id":
			s.Once(&seen, 2)
			s.TextTo(&l.id)
		case "cwd":
			s.Once(&seen, 4)
			s.TextTo(&l.cwd)
		case "model":
			s.Once(&seen, 8)
			s.TextTo(&l.model)
		case "turn_id":
			s.Once(&seen, 16)
			s.TextTo(&l.turnID)
		case "response_id":
			s.Once(&seen, 32)
			s.TextTo(&l.responseID)
		case "model_context_window":
			s.Once(&seen, 64)
			s.IntTo(&l.window)
		case "compaction_response_id":
			s.Once(&seen, 128)
			s.TextTo(&l.compactionRespID)
		case "cli_version":
			s.Once(&seen, 512)
			s.TextTo(&l.cliVersion)
		case "info":
			s.Once(&seen, 256)
			if !s.Null() {
				scanInfo(s, l)
			}
		default:
			s.UnreadKey(key, plain, payloadKeys)
			s.Skip()
		}
	}
}

func scanInfo(s *telemetry.JSONScan, l *fastLine) {
	if !s.Object() {
		return
	}
	l.hasInfo = true
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "total_token_usage":
			s.Once(&seen, 1)
			_, l.hasTotalUse = scanUsage(s, &l.infoTotal, &l.totalUse)
		case "last_token_usage":
			s.Once(&seen, 2)
			l.lastRead, l.hasLastUse = scanUsage(s, &l.infoLast, &l.lastUse)
		case "model_context_window":
			s.Once(&seen, 4)
			s.IntTo(&l.infoWindow)
		default:
			s.UnreadKey(key, plain, infoKeys)
			s.Skip()
		}
	}
}

// scanUsage reads a usage object: total_tokens into dst, the rest into
// use; null leaves both (a struct field, as encoding/json does). It
// reports whether the object names total_tokens, and whether it is one
// (not null).
func scanUsage(s *telemetry.JSONScan, dst *int64, use *tokenUsage) (named, present bool) {
	if s.Null() || !s.Object() {
		return false, false
	}
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "total_tokens":
			s.Once(&seen, 1)
			s.IntTo(dst)
			named = true
		case "input_tokens":
			s.Once(&seen, 2)
			s.IntTo(&use.Input)
		case "cached_input_tokens":
			s.Once(&seen, 4)
			s.IntTo(&use.Cached)
		case "cache_write_input_tokens":
			s.Once(&seen, 8)
			s.IntTo(&use.CacheWrite)
		case "output_tokens":
			s.Once(&seen, 16)
			s.IntTo(&use.Output)
		case "reasoning_output_tokens":
			s.Once(&seen, 32)
			s.IntTo(&use.Reasoning)
		default:
			s.UnreadKey(key, plain, usageKeys)
			s.Skip()
		}
	}
	return named, true
}

// lastNamed reports whether a payload's info.last_token_usage names
// total_tokens (keys matched as encoding/json matches them).
func lastNamed(payload json.RawMessage) bool {
	var p struct {
		Info *struct {
			Last map[string]json.RawMessage `json:"last_token_usage"`
		} `json:"info"`
	}
	if json.Unmarshal(payload, &p) != nil || p.Info == nil {
		return false
	}
	for k := range p.Info.Last {
		if strings.EqualFold(k, "total_tokens") {
			return true
		}
	}
	return false
}

// decodeLine reads data with encoding/json (lines the fast pass leaves to
// it) into l.
func decodeLine(l *fastLine, data []byte) error {
	var r rolloutLine
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	if r.Type == "" {
		return telemetry.ErrNotObject
	}
	var pl payload
	if len(r.Payload) > 0 && r.Payload[0] == '{' {
		if err := json.Unmarshal(r.Payload, &pl); err != nil {
			return err
		}
	}
	*l = fastLine{
		timestamp: []byte(r.Timestamp), typ: []byte(r.Type),
		plType: []byte(pl.Type), id: []byte(pl.ID), cwd: []byte(pl.Cwd), model: []byte(pl.Model),
		turnID: []byte(pl.TurnID), responseID: []byte(pl.ResponseID), compactionRespID: []byte(pl.CompactionRespID),
		cliVersion: []byte(pl.CLIVersion),
		window:     pl.ModelContextWindow,
	}
	if pl.Info != nil {
		l.hasInfo = true
		l.lastRead = lastNamed(r.Payload)
		l.infoTotal, l.infoLast, l.infoWindow = pl.Info.Total.TotalTokens, pl.Info.Last.TotalTokens, pl.Info.ModelContextWindow
	}
	return nil
}

// Parse implements telemetry.Parser.
func (p *Parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	l := &p.l
	if scanLine(&p.scan, l, line) {
		l.onePass = true
	} else if err := decodeLine(l, line); err != nil {
		return dst, err
	}
	b := lazyBase{src: src, ts: l.timestamp, model: p.model}
	switch string(l.typ) {
	case "session_meta":
		if len(l.cliVersion) > 0 && string(l.cliVersion) != p.version {
			p.version = string(l.cliVersion)
		}
		if len(l.id) > 0 && string(l.id) != p.sessionID {
			p.sessionID = string(l.id)
			o := b.get()
			o.Kind = telemetry.ObsHarnessSession
			o.Cwd = string(l.cwd)
			dst = append(dst, p.stamp(o))
		}
	case "turn_context":
		if len(l.model) > 0 && string(l.model) != p.model {
			p.model = string(l.model)
		}
	case "token_usage_record":
		if string(l.responseID) != p.lastRespID {
			p.lastRespID = string(l.responseID)
		}
	case "compacted":
		dst = p.flush(dst)
		o := b.get()
		o.Kind = telemetry.ObsCompacted
		o.Trigger = "auto"
		o.FrameID = p.turn
		o.Window = p.window
		o.PreTokens = p.lastTotal
		if len(l.compactionRespID) > 0 && string(l.compactionRespID) == p.lastRespFor {
			o.PreTokens = p.prevTotal
		}
		o = p.stamp(o)
		p.pending = &o
	case "event_msg":
		dst = p.event(dst, l, &b)
	}
	return dst, nil
}

// lazyBase is the observation every one of a line's starts from, its
// timestamp parsed when first needed.
type lazyBase struct {
	src   telemetry.Provenance
	ts    []byte
	model string
	o     telemetry.Observation
	done  bool
}

func (b *lazyBase) get() telemetry.Observation {
	if !b.done {
		b.o = telemetry.Observation{Source: b.src, At: telemetry.ParseTime(string(b.ts)), Model: b.model}
		b.done = true
	}
	return b.o
}

func (p *Parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	o.HarnessVersion = p.version
	return o
}

// flush emits a held-back compaction without post tokens.
func (p *Parser) flush(dst []telemetry.Observation) []telemetry.Observation {
	if p.pending != nil {
		dst = append(dst, *p.pending)
		p.pending = nil
	}
	return dst
}

func (p *Parser) event(dst []telemetry.Observation, l *fastLine, b *lazyBase) []telemetry.Observation {
	switch string(l.plType) {
	case "task_started":
		dst = p.flush(dst)
		p.turn = string(l.turnID)
		if l.window > 0 {
			p.window = l.window
		}
		o := b.get()
		o.FrameID = p.turn
		o.Window = p.window
		o.Kind = telemetry.ObsFrameOpening
		dst = append(dst, p.stamp(o))
		o.Kind = telemetry.ObsFrameOpened
		dst = append(dst, p.stamp(o))
	case "user_message":
		o := b.get()
		o.Kind = telemetry.ObsUserMessage
		o.FrameID = p.turn
		dst = append(dst, p.stamp(o))
	case "token_count":
		if !l.hasInfo {
			return dst
		}
		if !l.lastRead {
			// 0.169.0 writes info.last_token_usage.total_tokens on every
			// token_count with info: one without is a format this parser
			// no longer reads, and pressure goes blind.
			o := b.get()
			o.Kind = telemetry.ObsUnreadable
			o.FrameID = p.turn
			o.Detail = "a token_count without a readable info.last_token_usage.total_tokens"
			dst = append(dst, p.stamp(o))
		}
		if l.infoWindow > 0 {
			p.window = l.infoWindow
		}
		tot, cum := l.infoLast, l.infoTotal
		if p.haveCount && tot == p.lastTotal && cum == p.lastCum && p.pending == nil {
			return dst // the harness repeats a token_count verbatim
		}
		p.prevTotal, p.lastTotal, p.lastCum, p.haveCount = p.lastTotal, tot, cum, true
		p.lastRespFor = p.lastRespID
		if p.pending != nil {
			p.pending.PostTokens = tot
			dst = p.flush(dst)
		}
		o := b.get()
		o.Kind = telemetry.ObsUsage
		o.FrameID = p.turn
		o.Tokens = tot
		o.Window = p.window
		dst = append(dst, p.stamp(o))
	case "task_complete", "turn_aborted":
		dst = p.flush(dst)
		id := string(l.turnID)
		if id == "" {
			id = p.turn
		}
		o := b.get()
		o.Kind = telemetry.ObsFrameEnded
		o.FrameID = id
		o.Trigger = string(l.plType)
		if o.Trigger == "turn_aborted" {
			o.Trigger = "aborted"
		}
		if id == p.turn {
			p.turn = ""
		}
		dst = append(dst, p.stamp(o))
	}
	return dst
}
