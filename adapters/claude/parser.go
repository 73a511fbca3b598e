package claude

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/telemetry"
)

// Claude context windows.
const (
	windowDefault = 200_000
	windowMillion = 1_000_000
)

// millionModels are model name prefixes whose default window is 1M
// tokens (the harness's default model family). Models suffixed "[1m]" are
// 1M as well; every other model is 200k.
var millionModels = []string{"claude-opus-4-8"}

// windowConfig is the window overrides the parser measures usage
// against, read from the harness's environment (windowConfigOf).
type windowConfig struct {
	// AutoCompactWindow is CLAUDE_CODE_AUTO_COMPACT_WINDOW (0 = unset).
	AutoCompactWindow int64
	// MaxContextTokens is CLAUDE_CODE_MAX_CONTEXT_TOKENS (0 = unset).
	MaxContextTokens int64
}

// window returns the effective context window for model:
// MaxContextTokens replaces the model's window when set, and
// AutoCompactWindow lowers it when set and smaller (the harness compacts
// at that size, so pressure is measured against it). The model's window is
// 1M for "[1m]" models and the claude-opus-4-8 family, 200k otherwise.
func (c windowConfig) window(model string) int64 {
	w := int64(windowDefault)
	if strings.HasSuffix(strings.ToLower(model), "[1m]") {
		w = windowMillion
	} else {
		for _, p := range millionModels {
			if strings.HasPrefix(model, p) {
				w = windowMillion
			}
		}
	}
	if c.MaxContextTokens > 0 {
		w = c.MaxContextTokens
	}
	if c.AutoCompactWindow > 0 && c.AutoCompactWindow < w {
		w = c.AutoCompactWindow
	}
	return w
}

// parser reads Claude Code transcript lines
// (<config>/projects/<cwd>/<session>.jsonl).
//
// Rules:
//   - sessionId: ObsHarnessSession when first seen or changed.
//   - A turn opens (ObsFrameOpening) on a real user prompt: a "user" line
//     that is not isMeta, not isCompactSummary, not
//     isVisibleInTranscriptOnly, not a local slash command (/exit: its
//     caveat, command and output lines) and whose content is not only
//     tool_result blocks. Assistant lines of the "<synthetic>" model (the
//     TUI's own, no model call) are ignored unless they are API errors.
//     The frame id is the line's promptId (shared by every line of the
//     turn), else its uuid.
//   - The first assistant line of the turn gives ObsFrameOpened.
//   - An assistant line whose stop_reason ends the turn (anything but
//     tool_use / pause_turn / empty) gives ObsFrameEnded with the stop
//     reason as Trigger; tool_use is mid-turn.
//   - isSidechain lines belong to a subcall frame whose ParentFrameID is
//     the open main turn; sidechain usage is not the main context and is
//     not reported.
//   - Usage per assistant line = input_tokens +
//     cache_creation_input_tokens + cache_read_input_tokens +
//     output_tokens, reported once per (message.id, requestId): the
//     harness writes one line per content block with the same usage.
//   - system/compact_boundary gives ObsCompacted with compactMetadata's
//     trigger, preTokens and postTokens.
//   - isApiErrorMessage lines give ObsAPIError (Trigger = the error code),
//     and end an open turn with Trigger "api_error".
//
// Reading a line: one pass over its bytes (telemetry.JSONScan) checks
// it and picks out the fields above, nothing else (a tool's output, the
// text of a reply, the many fields the rules do not use are only
// checked). A line that pass does not take as the usual shape (not valid
// JSON, a field of an unexpected type, a key spelled in another case or
// with an escape, a field given twice) is decoded with encoding/json as a
// whole instead, and a content whose blocks are not all objects, or a
// string content with an escape where a local command's tag would be, is
// judged by encoding/json alone; so both ways read every line alike.
// Timestamps are parsed only for lines that report something.
type parser struct {
	cfg       windowConfig
	sessionID string
	version   string // the Claude Code version the lines record
	frame     string // open main frame, "" when none
	opened    bool   // ObsFrameOpened emitted for frame
	side      string // open sidechain frame
	early     *earlyAnswer
	seen      map[string]struct{} // usage keys: message id, NUL, request id
	seenOrder []string
	models    []string // model names seen (reused, not reallocated)

	scan telemetry.JSONScan
	l    line
	// The line being parsed: its provenance and timestamp, parsed when
	// first needed.
	src    telemetry.Provenance
	ts     []byte
	at     time.Time
	atDone bool
}

// earlyAnswer is the answer of a turn whose prompt line is not written
// yet: Claude Code sometimes appends a turn's assistant line before the
// user line that opened it (measured with 2.1.197, the user line carrying
// the earlier timestamp). Its frame events wait for that line.
type earlyAnswer struct {
	at    time.Time
	model string
	stop  string
	ended bool
}

const maxSeenUsage = 4096

// newParser returns a parser for Claude Code transcripts.
func newParser(cfg windowConfig) *parser {
	return &parser{cfg: cfg, seen: make(map[string]struct{})}
}

// SourceKind implements telemetry.Parser.
func (p *parser) SourceKind() telemetry.SourceKind { return telemetry.SourceTranscript }

// transcriptLine is the part of a transcript line the parser reads, as
// encoding/json decodes it (lines the fast pass leaves to it).
type transcriptLine struct {
	Type                      string          `json:"type"`
	Subtype                   string          `json:"subtype"`
	SessionID                 string          `json:"sessionId"`
	UUID                      string          `json:"uuid"`
	PromptID                  string          `json:"promptId"`
	AgentID                   string          `json:"agentId"`
	Timestamp                 string          `json:"timestamp"`
	RequestID                 string          `json:"requestId"`
	Version                   string          `json:"version"`
	IsSidechain               bool            `json:"isSidechain"`
	IsMeta                    bool            `json:"isMeta"`
	IsCompactSummary          bool            `json:"isCompactSummary"`
	IsVisibleInTranscriptOnly bool            `json:"isVisibleInTranscriptOnly"`
	IsAPIErrorMessage         bool            `json:"isApiErrorMessage"`
	Error                     json.RawMessage `json:"error"`
	Message                   *message        `json:"message"`
	CompactMetadata           *struct {
		Trigger    string `json:"trigger"`
		PreTokens  int64  `json:"preTokens"`
		PostTokens int64  `json:"postTokens"`
	} `json:"compactMetadata"`
}

type message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Model      string          `json:"model"`
	StopReason string          `json:"stop_reason"`
	Content    json.RawMessage `json:"content"`
	// Usage is decoded apart (decodeUsage), so a shape the parser cannot
	// read costs the usage only, not the whole line.
	Usage json.RawMessage `json:"usage"`
}

// usage is message.usage as encoding/json reads it.
type usage struct {
	Input         int64 `json:"input_tokens"`
	CacheCreation int64 `json:"cache_creation_input_tokens"`
	CacheRead     int64 `json:"cache_read_input_tokens"`
	Output        int64 `json:"output_tokens"`
}

// decodeUsage reads raw (message.usage) into l: hasUsage when it is an
// object of numbers, usageRead when it names input_tokens or
// output_tokens (as encoding/json matches keys, case-insensitively).
func decodeUsage(l *line, raw json.RawMessage) {
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	var u usage
	var keys map[string]json.RawMessage
	if json.Unmarshal(raw, &u) != nil || json.Unmarshal(raw, &keys) != nil {
		return
	}
	l.hasUsage = true
	l.input, l.cc, l.cr, l.out = u.Input, u.CacheCreation, u.CacheRead, u.Output
	for k := range keys {
		if strings.EqualFold(k, "input_tokens") || strings.EqualFold(k, "output_tokens") {
			l.usageRead = true
		}
	}
}

// tri is a property of a line's content: no, yes, or not known from the
// fast pass (then the encoding/json reading decides).
type tri uint8

const (
	no tri = iota
	yes
	unknown
)

// line is what the parser reads of a transcript line. Byte fields point
// into the line (or hold a decoded copy) and live until the next line.
type line struct {
	typ, subtype, sessionID, uuid, promptID, agentID, timestamp, requestID []byte

	isSidechain, isMeta, isCompactSummary, isVisible, isAPIError bool

	errRaw []byte // the error field as json.RawMessage holds it

	hasMessage bool
	msgID      []byte
	model      []byte
	stop       []byte
	content    []byte // raw, as json.RawMessage holds it
	prompt     tri    // isPrompt(content)
	local      tri    // isLocalCommand(content)

	hasUsage              bool
	usageRead             bool   // the usage names input_tokens or output_tokens
	version               []byte // the Claude Code version that wrote the line
	input, cc, cr, out    int64
	hasCompact            bool
	trigger               []byte
	preTokens, postTokens int64
}

// The fields of a line the parser reads, as bits for spotting a field
// given twice.
const (
	fType = 1 << iota
	fSubtype
	fSessionID
	fUUID
	fPromptID
	fAgentID
	fTimestamp
	fRequestID
	fIsSidechain
	fIsMeta
	fIsCompactSummary
	fIsVisible
	fIsAPIError
	fError
	fMessage
	fCompact
	fVersion
)

var (
	lineKeys    = []string{"type", "subtype", "sessionId", "uuid", "promptId", "agentId", "timestamp", "requestId", "isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "isApiErrorMessage", "error", "message", "compactMetadata", "version"}
	messageKeys = []string{"id", "role", "model", "stop_reason", "content", "usage"}
	usageKeys   = []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"}
	compactKeys = []string{"trigger", "preTokens", "postTokens"}
)

// scanLine reads data into l in one pass; false leaves the line to
// encoding/json.
func scanLine(s *telemetry.JSONScan, l *line, data []byte) bool {
	*l = line{}
	s.Reset(data)
	if !s.Object() {
		return false
	}
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "type":
			s.Once(&seen, fType)
			s.TextTo(&l.typ)
		case "subtype":
			s.Once(&seen, fSubtype)
			s.TextTo(&l.subtype)
		case "sessionId":
			s.Once(&seen, fSessionID)
			s.TextTo(&l.sessionID)
		case "uuid":
			s.Once(&seen, fUUID)
			s.TextTo(&l.uuid)
		case "promptId":
			s.Once(&seen, fPromptID)
			s.TextTo(&l.promptID)
		case "agentId":
			s.Once(&seen, fAgentID)
			s.TextTo(&l.agentID)
		case "timestamp":
			s.Once(&seen, fTimestamp)
			s.TextTo(&l.timestamp)
		case "requestId":
			s.Once(&seen, fRequestID)
			s.TextTo(&l.requestID)
		case "isSidechain":
			s.Once(&seen, fIsSidechain)
			s.BoolTo(&l.isSidechain)
		case "isMeta":
			s.Once(&seen, fIsMeta)
			s.BoolTo(&l.isMeta)
		case "isCompactSummary":
			s.Once(&seen, fIsCompactSummary)
			s.BoolTo(&l.isCompactSummary)
		case "isVisibleInTranscriptOnly":
			s.Once(&seen, fIsVisible)
			s.BoolTo(&l.isVisible)
		case "isApiErrorMessage":
			s.Once(&seen, fIsAPIError)
			s.BoolTo(&l.isAPIError)
		case "error":
			s.Once(&seen, fError)
			l.errRaw = s.Skip()
		case "message":
			s.Once(&seen, fMessage)
			if !s.Null() {
				scanMessage(s, l)
			}
		case "version":
			s.Once(&seen, fVersion)
			s.TextTo(&l.version)
		case "compactMetadata":
			s.Once(&seen, fCompact)
			if !s.Null() {
				scanCompact(s, l)
			}
		default:
			s.UnreadKey(key, plain, lineKeys)
			s.Skip()
		}
	}
	return s.End() && len(l.typ) > 0
}

func scanMessage(s *telemetry.JSONScan, l *line) {
	if !s.Object() {
		return
	}
	l.hasMessage = true
	var seen uint32
	var role []byte
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "id":
			s.Once(&seen, 1)
			s.TextTo(&l.msgID)
		case "role":
			s.Once(&seen, 2)
			s.TextTo(&role)
		case "model":
			s.Once(&seen, 4)
			s.TextTo(&l.model)
		case "stop_reason":
			s.Once(&seen, 8)
			s.TextTo(&l.stop)
		case "content":
			s.Once(&seen, 16)
			scanContent(s, l)
		case "usage":
			s.Once(&seen, 32)
			if !s.Null() {
				scanUsage(s, l)
			}
		default:
			s.UnreadKey(key, plain, messageKeys)
			s.Skip()
		}
	}
}

func scanUsage(s *telemetry.JSONScan, l *line) {
	if !s.Object() {
		return
	}
	l.hasUsage = true
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "input_tokens":
			s.Once(&seen, 1)
			s.IntTo(&l.input)
			l.usageRead = true
		case "cache_creation_input_tokens":
			s.Once(&seen, 2)
			s.IntTo(&l.cc)
		case "cache_read_input_tokens":
			s.Once(&seen, 4)
			s.IntTo(&l.cr)
		case "output_tokens":
			s.Once(&seen, 8)
			s.IntTo(&l.out)
			l.usageRead = true
		default:
			s.UnreadKey(key, plain, usageKeys)
			s.Skip()
		}
	}
}

func scanCompact(s *telemetry.JSONScan, l *line) {
	if !s.Object() {
		return
	}
	l.hasCompact = true
	var seen uint32
	for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
		switch string(key) {
		case "trigger":
			s.Once(&seen, 1)
			s.TextTo(&l.trigger)
		case "preTokens":
			s.Once(&seen, 2)
			s.IntTo(&l.preTokens)
		case "postTokens":
			s.Once(&seen, 4)
			s.IntTo(&l.postTokens)
		default:
			s.UnreadKey(key, plain, compactKeys)
			s.Skip()
		}
	}
}

// localTags begin the text of a local slash command's lines.
var localTags = []string{"<local-command-caveat>", "<command-name>", "<local-command-stdout>", "<local-command-stderr>"}

// localTag reports whether a string content, raw between its quotes,
// begins with a local command's tag once decoded. Up to the first escape
// the raw text is the decoded text (a byte of 0x80 and up never matches
// an ASCII tag, decoded or not), so only a tag that matches up to an
// escape is left unknown.
func localTag(raw []byte) tri {
	esc := bytes.IndexByte(raw, '\\')
	res := no
	for _, tag := range localTags {
		m := 0
		for m < len(tag) && m < len(raw) && raw[m] == tag[m] {
			m++
		}
		switch {
		case m == len(tag):
			return yes
		case esc >= 0 && m >= esc:
			res = unknown
		}
	}
	return res
}

// scanContent reads a message's content, deciding on the way what
// isPrompt and isLocalCommand would say of it.
func scanContent(s *telemetry.JSONScan, l *line) {
	switch s.Peek() {
	case '"':
		tok := s.Skip()
		if len(tok) < 2 {
			return // bad
		}
		l.content = tok
		raw := tok[1 : len(tok)-1]
		l.prompt = yes
		l.local = localTag(raw)
	case '[':
		l.local = no
		l.prompt = no
		start := s.Pos()
		if !s.Array() {
			return
		}
		for s.Elem() {
			switch s.Peek() {
			case '{':
				s.Object()
				var typ []byte
				for key, plain, ok := s.Key(); ok; key, plain, ok = s.Key() {
					if string(key) == "type" {
						s.TextTo(&typ) // a repeated "type": the last wins, as in encoding/json
						continue
					}
					if !plain || telemetry.FoldsTo(key, "type") {
						l.prompt = unknown
					}
					s.Skip()
				}
				if l.prompt == no && string(typ) != "tool_result" {
					l.prompt = yes
				}
			case 'n':
				s.Null()
				if l.prompt == no {
					l.prompt = yes // a null block decodes as one without a type
				}
			default:
				s.Skip()
				l.prompt = unknown // not a block: encoding/json decides
			}
		}
		if !s.Bad {
			l.content = s.Since(start)
		}
	default:
		// null, a number, true, false or an object: neither a prompt nor
		// a local command.
		s.Skip()
		l.prompt, l.local = no, no
	}
}

// fromDecoded fills l from a line encoding/json decoded.
func fromDecoded(l *line, d *transcriptLine) {
	*l = line{
		typ: []byte(d.Type), subtype: []byte(d.Subtype), sessionID: []byte(d.SessionID),
		uuid: []byte(d.UUID), promptID: []byte(d.PromptID), agentID: []byte(d.AgentID),
		timestamp: []byte(d.Timestamp), requestID: []byte(d.RequestID),
		isSidechain: d.IsSidechain, isMeta: d.IsMeta, isCompactSummary: d.IsCompactSummary,
		isVisible: d.IsVisibleInTranscriptOnly, isAPIError: d.IsAPIErrorMessage,
		errRaw: d.Error, version: []byte(d.Version),
	}
	if m := d.Message; m != nil {
		l.hasMessage = true
		l.msgID, l.model, l.stop, l.content = []byte(m.ID), []byte(m.Model), []byte(m.StopReason), m.Content
		l.prompt, l.local = unknown, unknown
		decodeUsage(l, m.Usage)
	}
	if c := d.CompactMetadata; c != nil {
		l.hasCompact = true
		l.trigger, l.preTokens, l.postTokens = []byte(c.Trigger), c.PreTokens, c.PostTokens
	}
}

// Parse implements telemetry.Parser.
func (p *parser) Parse(dst []telemetry.Observation, data []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	l := &p.l
	if !scanLine(&p.scan, l, data) {
		var d transcriptLine
		if err := json.Unmarshal(data, &d); err != nil {
			return dst, err
		}
		if d.Type == "" {
			return dst, telemetry.ErrNotObject
		}
		fromDecoded(l, &d)
	}
	p.src, p.ts, p.atDone = src, l.timestamp, false
	if len(l.version) > 0 && string(l.version) != p.version {
		p.version = string(l.version)
	}
	if len(l.sessionID) > 0 && string(l.sessionID) != p.sessionID {
		p.sessionID = string(l.sessionID)
		o := p.base()
		o.Kind = telemetry.ObsHarnessSession
		dst = append(dst, p.stamp(o))
	}
	switch string(l.typ) {
	case "user":
		dst = p.user(dst, l)
	case "assistant":
		dst = p.assistant(dst, l)
	case "system":
		if string(l.subtype) == "compact_boundary" && l.hasCompact {
			o := p.base()
			o.Kind = telemetry.ObsCompacted
			o.Trigger = string(l.trigger)
			o.PreTokens = l.preTokens
			o.PostTokens = l.postTokens
			o.FrameID = p.frame
			dst = append(dst, p.stamp(o))
		}
	}
	return dst, nil
}

// base is the observation every one of the line's starts from.
func (p *parser) base() telemetry.Observation {
	if !p.atDone {
		p.at = telemetry.ParseTime(string(p.ts))
		p.atDone = true
	}
	return telemetry.Observation{Source: p.src, At: p.at}
}

func (p *parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	o.HarnessVersion = p.version
	return o
}

// isPrompt and isLocal settle what the fast pass left unknown.
func (l *line) isPrompt() bool {
	if l.prompt == unknown {
		return isPrompt(l.content)
	}
	return l.prompt == yes
}

func (l *line) isLocal() bool {
	if l.local == unknown {
		return isLocalCommand(l.content)
	}
	return l.local == yes
}

func (p *parser) user(dst []telemetry.Observation, l *line) []telemetry.Observation {
	if l.isMeta || l.isCompactSummary || l.isVisible || !l.hasMessage || !l.isPrompt() || l.isLocal() {
		return dst
	}
	idb := l.promptID
	if len(idb) == 0 {
		idb = l.uuid
	}
	if l.isSidechain {
		if len(l.agentID) > 0 {
			idb = l.agentID
		}
		if p.side == string(idb) {
			return dst
		}
		p.side = string(idb)
		o := p.base()
		o.Kind = telemetry.ObsFrameOpening
		o.FrameID = p.side
		o.ParentFrameID = p.frame
		return append(dst, p.stamp(o))
	}
	if p.frame == string(idb) {
		return dst // a queued second prompt line of the same turn
	}
	id := string(idb)
	p.frame, p.opened = id, false
	base := p.base()
	o := base
	o.Kind = telemetry.ObsFrameOpening
	o.FrameID = id
	dst = append(dst, p.stamp(o))
	if e := p.early; e != nil {
		p.early = nil
		if !e.at.IsZero() && !base.At.IsZero() && !e.at.Before(base.At) {
			// The answer written before this prompt line belongs to it.
			p.opened = true
			op := base
			op.Kind, op.FrameID, op.Model = telemetry.ObsFrameOpened, id, e.model
			dst = append(dst, p.stamp(op))
			if e.ended {
				base.Model = e.model
				dst = p.endFrame(dst, base, e.stop)
			}
		}
	}
	return dst
}

// isPrompt reports whether a user message's content is a prompt (a string,
// or blocks of which at least one is not a tool_result).
func isPrompt(content json.RawMessage) bool {
	c := bytes.TrimSpace(content)
	if len(c) == 0 {
		return false
	}
	if c[0] == '"' {
		return true
	}
	var blocks []struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(c, &blocks) != nil {
		return false
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			return true
		}
	}
	return false
}

// isLocalCommand reports whether a user line records a slash command the
// TUI ran itself (/exit, /clear, ...): its caveat, the command and its
// output, none of which reaches the model.
func isLocalCommand(content json.RawMessage) bool {
	var text string
	if json.Unmarshal(content, &text) != nil {
		return false
	}
	for _, tag := range localTags {
		if strings.HasPrefix(text, tag) {
			return true
		}
	}
	return false
}

// syntheticModel is the model of assistant lines the TUI writes
// itself (e.g. after a local command): no model call, no usage.
const syntheticModel = "<synthetic>"

func turnEnds(stop string) bool {
	switch stop {
	case "", "tool_use", "pause_turn":
		return false
	}
	return true
}

// modelName returns the line's model as a string, reusing one seen
// before (a transcript names few models).
func (p *parser) modelName(b []byte) string {
	for _, m := range p.models {
		if m == string(b) {
			return m
		}
	}
	m := string(b)
	if len(p.models) < 8 {
		p.models = append(p.models, m)
	}
	return m
}

func (p *parser) assistant(dst []telemetry.Observation, l *line) []telemetry.Observation {
	if !l.hasMessage {
		return dst
	}
	if string(l.model) == syntheticModel && !l.isAPIError {
		return dst
	}
	stop := l.stop
	if l.isSidechain {
		if p.side != "" && turnEnds(string(stop)) {
			o := p.base()
			o.Model = p.modelName(l.model)
			o.Kind = telemetry.ObsFrameEnded
			o.FrameID, o.ParentFrameID, o.Trigger = p.side, p.frame, string(stop)
			p.side = ""
			dst = append(dst, p.stamp(o))
		}
		return dst
	}
	if p.frame == "" && !l.isAPIError {
		// No turn is open: the prompt line may follow (see earlyAnswer).
		if p.early == nil {
			p.early = &earlyAnswer{at: p.base().At, model: p.modelName(l.model)}
		}
		p.early.stop = string(stop)
		p.early.ended = p.early.ended || turnEnds(p.early.stop)
	}
	if p.frame != "" && !p.opened {
		p.opened = true
		o := p.base()
		o.Model = p.modelName(l.model)
		o.Kind = telemetry.ObsFrameOpened
		o.FrameID = p.frame
		dst = append(dst, p.stamp(o))
	}
	if l.isAPIError {
		base := p.base()
		base.Model = p.modelName(l.model)
		o := base
		o.Kind = telemetry.ObsAPIError
		o.FrameID = p.frame
		o.Trigger = errorCode(l.errRaw)
		dst = append(dst, p.stamp(o))
		return p.endFrame(dst, base, "api_error")
	}
	if !l.usageRead {
		// Every assistant line of a model reply carries its usage
		// (2.1.197, 2.1.330): one without a readable usage is a format
		// this parser no longer understands, and pressure goes blind.
		o := p.base()
		o.Kind = telemetry.ObsUnreadable
		o.FrameID = p.frame
		o.Detail = "an assistant line without a readable message.usage (input_tokens, output_tokens)"
		dst = append(dst, p.stamp(o))
	}
	if l.hasUsage && p.firstUsage(l.msgID, l.requestID) {
		o := p.base()
		o.Model = p.modelName(l.model)
		o.Kind = telemetry.ObsUsage
		o.FrameID = p.frame
		o.Tokens = l.input + l.cc + l.cr + l.out
		o.Window = p.cfg.window(o.Model)
		dst = append(dst, p.stamp(o))
	}
	if turnEnds(string(stop)) {
		base := p.base()
		base.Model = p.modelName(l.model)
		dst = p.endFrame(dst, base, string(stop))
	}
	return dst
}

func (p *parser) endFrame(dst []telemetry.Observation, base telemetry.Observation, reason string) []telemetry.Observation {
	if p.frame == "" {
		return dst
	}
	o := base
	o.Kind = telemetry.ObsFrameEnded
	o.FrameID = p.frame
	o.Trigger = reason
	p.frame, p.opened = "", false
	return append(dst, p.stamp(o))
}

// firstUsage records (msg, req) and reports whether it was new. Lines
// without a message id are always new. Memory is bounded: the oldest keys
// are forgotten after maxSeenUsage (repeats are adjacent in practice).
func (p *parser) firstUsage(msg, req []byte) bool {
	if len(msg) == 0 {
		return true
	}
	if n := len(p.seenOrder); n > 0 {
		// The newest key is always still remembered.
		if last := p.seenOrder[n-1]; len(last) == len(msg)+1+len(req) && last[:len(msg)] == string(msg) && last[len(msg)] == 0 && last[len(msg)+1:] == string(req) {
			return false
		}
	}
	k := string(msg) + "\x00" + string(req)
	if _, ok := p.seen[k]; ok {
		return false
	}
	p.seen[k] = struct{}{}
	p.seenOrder = append(p.seenOrder, k)
	if len(p.seenOrder) > maxSeenUsage {
		delete(p.seen, p.seenOrder[0])
		p.seenOrder = p.seenOrder[1:]
	}
	return true
}

func errorCode(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Type string `json:"type"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Type != "" {
		return obj.Type
	}
	return "unknown"
}
