package opencode

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/lifeloop/lifeloop/telemetry"
)

// Parser reads the records Follow makes of a session's event rows
// ({"seq","type","data"}; data is the row's JSON: {sessionID, info} for
// session.* and message.updated.1, {sessionID, part, time} for
// message.part.updated.1).
//
// Rules (measured with 1.18.33 against the loopback mock model):
//   - The first record names the session: ObsHarnessSession (Cwd from the
//     session's directory when the record carries it).
//   - A user message is classified by its first part. A compaction part
//     makes it a compaction request (no turn); anything else opens a turn
//     — ObsFrameOpening, FrameID = the user message id — unless a turn is
//     open, where it is an ObsUserMessage of that turn (a prompt queued
//     while OpenCode works). The synthetic "continue" prompt OpenCode adds
//     after an automatic compaction (metadata.compaction_continue) opens a
//     turn too: OpenCode runs it as one, with its own model requests.
//   - The first assistant message answering the turn: ObsFrameOpened
//     (Model = its modelID).
//   - Each step-finish part (one per model request) of an assistant
//     message: ObsUsage, Tokens = tokens.total (input + output + reasoning
//   - cache read + cache write: what OpenCode itself compares with the
//     window), Window = the model's limit.context (see config.go); an
//     assistant message completed without a step-finish reports its own
//     tokens. The compaction request's own usage (the summary) is not the
//     context in use and is not reported.
//   - An assistant message of the turn completed (time.completed) with a
//     finish other than tool-calls and unknown (OpenCode goes on after
//     those), answering the turn's latest prompt (else OpenCode goes on
//     with the queued one): ObsFrameEnded, Trigger = the finish reason. With an error:
//     Trigger "aborted" for MessageAbortedError, else ObsAPIError
//     (Trigger = the error's name) and ObsFrameEnded with Trigger "error".
//   - The summary answering a compaction request completed:
//     ObsCompacted, Trigger "auto" or "manual" (the compaction part's
//     auto), PreTokens = the last usage before the request, PostTokens 0
//     (unknown until the next request: the usage that follows moves the
//     level again), ID = the compaction request's id (the bridge plugin
//     reports the same compaction under it).
//
// OpenCode updates a message more than once (a user message gets its
// diff summary after the answer; an assistant message its tokens, then
// its completion), so a message is settled once: a record about a
// message already settled is ignored. Memory stays flat over any session
// length: the parser keeps the open turn, the user messages waiting for
// their first part, the assistant messages not yet completed and the ids
// of the last settledCap messages settled (not an order of ids: OpenCode's
// ids sort by time only within the 48 bits of milliseconds they hold).
type Parser struct {
	window func(provider, model string) int64

	sessionID string
	version   string // OpenCode's, from the session's record

	settled settledSet        // messages classified (user) or completed (assistant)
	pending map[string]int64  // user messages waiting for their first part → created (ms)
	frame   string            // the open turn ("" when none)
	members map[string]bool   // user messages of the open turn
	newest  string            // the open turn's latest user message
	opened  bool              // ObsFrameOpened sent for the open turn
	asst    map[string]*asstS // assistant messages not yet completed

	compactReq     string // the compaction request waiting for its summary
	compactTrigger string
	compactPre     int64

	lastTokens int64
	lastWindow int64
	lastModel  string
}

type asstS struct {
	parent   string
	summary  bool
	provider string
	model    string
	usage    bool // usage reported from a step-finish
}

// NewParser returns a parser; window returns a model's context window
// (0 when unknown; nil knows none).
func NewParser(window func(provider, model string) int64) *Parser {
	if window == nil {
		window = func(string, string) int64 { return 0 }
	}
	return &Parser{window: window, pending: map[string]int64{}, members: map[string]bool{}, asst: map[string]*asstS{}, settled: settledSet{m: map[string]bool{}}}
}

// settledCap is how many settled message ids the parser remembers.
const settledCap = 1024

// settledSet is a set of the last settledCap ids added.
type settledSet struct {
	m    map[string]bool
	ring [settledCap]string
	next int
}

func (s *settledSet) has(id string) bool { return s.m[id] }

func (s *settledSet) add(id string) {
	if s.m[id] {
		return
	}
	if old := s.ring[s.next]; old != "" {
		delete(s.m, old)
	}
	s.ring[s.next] = id
	s.m[id] = true
	s.next = (s.next + 1) % settledCap
}

// SourceKind implements telemetry.Parser.
func (p *Parser) SourceKind() telemetry.SourceKind { return SourceDatabase }

type tokens struct {
	Total     *int64 `json:"total"`
	Input     *int64 `json:"input"`
	Output    *int64 `json:"output"`
	Reasoning int64  `json:"reasoning"`
	Cache     struct {
		Read  int64 `json:"read"`
		Write int64 `json:"write"`
	} `json:"cache"`
}

func val(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// readable reports whether t has the numbers the context size is read
// from: total, or input and output.
func (t *tokens) readable() bool {
	return t != nil && (t.Total != nil || t.Input != nil && t.Output != nil)
}

func (t *tokens) context() int64 {
	if t == nil {
		return 0
	}
	if n := val(t.Total); n > 0 {
		return n
	}
	return val(t.Input) + val(t.Output) + t.Reasoning + t.Cache.Read + t.Cache.Write
}

type info struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	ParentID   string          `json:"parentID"`
	Directory  string          `json:"directory"`
	Mode       string          `json:"mode"`
	Summary    json.RawMessage `json:"summary"`
	ModelID    string          `json:"modelID"`
	Version    string          `json:"version"`
	ProviderID string          `json:"providerID"`
	Finish     string          `json:"finish"`
	Tokens     *tokens         `json:"tokens"`
	Time       struct {
		Created   int64 `json:"created"`
		Completed int64 `json:"completed"`
	} `json:"time"`
	Error *struct {
		Name string `json:"name"`
	} `json:"error"`
}

type part struct {
	ID        string `json:"id"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"`
	Synthetic bool   `json:"synthetic"`
	Auto      bool   `json:"auto"`
	Metadata  struct {
		CompactionContinue bool `json:"compaction_continue"`
	} `json:"metadata"`
	Tokens *tokens `json:"tokens"`
}

type rec struct {
	Seq  int64  `json:"seq"`
	Type string `json:"type"`
	Data struct {
		SessionID string `json:"sessionID"`
		Info      *info  `json:"info"`
		Part      *part  `json:"part"`
		Time      int64  `json:"time"`
	} `json:"data"`
}

func ms(v int64) time.Time {
	if v <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

// Parse implements telemetry.Parser.
func (p *Parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var r rec
	if err := json.Unmarshal(line, &r); err != nil {
		return dst, err
	}
	if r.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	if in := r.Data.Info; in != nil && in.Version != "" && in.ID != "" && in.ID == r.Data.SessionID {
		p.version = in.Version // the session's own record: OpenCode's version
	}
	if r.Data.SessionID != "" && r.Data.SessionID != p.sessionID {
		p.sessionID = r.Data.SessionID
		o := p.obs(telemetry.ObsHarnessSession, src, time.Time{})
		if r.Data.Info != nil && r.Data.Info.ID == r.Data.SessionID {
			o.Cwd = r.Data.Info.Directory
			o.At = ms(r.Data.Info.Time.Created)
		}
		dst = append(dst, o)
	}
	switch r.Type {
	case "message.updated.1":
		if r.Data.Info == nil {
			return dst, nil
		}
		switch r.Data.Info.Role {
		case "user":
			p.user(r.Data.Info)
		case "assistant":
			dst = p.assistant(dst, r.Data.Info, src)
		}
	case "message.part.updated.1":
		if r.Data.Part != nil {
			dst = p.part(dst, r.Data.Part, ms(r.Data.Time), src)
		}
	}
	return dst, nil
}

func (p *Parser) obs(kind telemetry.ObsKind, src telemetry.Provenance, at time.Time) telemetry.Observation {
	return telemetry.Observation{Kind: kind, HarnessSessionID: p.sessionID, HarnessVersion: p.version, Source: src, At: at}
}

// user notes a new user message; its first part decides what it is.
func (p *Parser) user(in *info) {
	if in.ID == "" || p.settled.has(in.ID) {
		return
	}
	if _, ok := p.pending[in.ID]; ok {
		return
	}
	if len(p.pending) >= 64 { // parts that never came: forget the earliest
		oldest, at := "", int64(0)
		for id, created := range p.pending {
			if oldest == "" || created < at {
				oldest, at = id, created
			}
		}
		delete(p.pending, oldest)
	}
	p.pending[in.ID] = in.Time.Created
}

func (p *Parser) part(dst []telemetry.Observation, pt *part, at time.Time, src telemetry.Provenance) []telemetry.Observation {
	if created, ok := p.pending[pt.MessageID]; ok {
		delete(p.pending, pt.MessageID)
		p.settled.add(pt.MessageID)
		if pt.Type == "compaction" {
			p.compactReq = pt.MessageID
			p.compactTrigger = "manual"
			if pt.Auto {
				p.compactTrigger = "auto"
			}
			p.compactPre = p.lastTokens
			return dst
		}
		if p.frame != "" {
			p.members[pt.MessageID] = true
			p.newest = pt.MessageID
			o := p.obs(telemetry.ObsUserMessage, src, ms(created))
			o.FrameID = p.frame
			return append(dst, o)
		}
		p.frame, p.opened, p.newest = pt.MessageID, false, pt.MessageID
		clear(p.members)
		p.members[pt.MessageID] = true
		o := p.obs(telemetry.ObsFrameOpening, src, ms(created))
		o.FrameID = p.frame
		if pt.Synthetic && pt.Metadata.CompactionContinue {
			o.Detail = "compaction_continue"
		}
		return append(dst, o)
	}
	if pt.Type == "step-finish" && !pt.Tokens.readable() {
		// 1.18.33 records tokens on every step-finish (one per model
		// request): one without is a format this parser no longer reads,
		// and pressure goes blind.
		o := p.obs(telemetry.ObsUnreadable, src, at)
		o.FrameID = p.frame
		o.Detail = "a step-finish part without readable tokens (total, or input and output)"
		return append(dst, o)
	}
	if pt.Type == "step-finish" {
		a := p.asst[pt.MessageID]
		if a == nil || a.summary {
			return dst
		}
		a.usage = true
		return p.usage(dst, a, pt.Tokens, at, src)
	}
	return dst
}

func (p *Parser) usage(dst []telemetry.Observation, a *asstS, t *tokens, at time.Time, src telemetry.Provenance) []telemetry.Observation {
	n := t.context()
	if n <= 0 {
		return dst
	}
	p.lastTokens = n
	p.lastModel = a.model
	p.lastWindow = p.window(a.provider, a.model)
	o := p.obs(telemetry.ObsUsage, src, at)
	o.Tokens, o.Window, o.Model = n, p.lastWindow, a.model
	if p.members[a.parent] {
		o.FrameID = p.frame
	}
	return append(dst, o)
}

func (p *Parser) assistant(dst []telemetry.Observation, in *info, src telemetry.Provenance) []telemetry.Observation {
	if in.ID == "" || p.settled.has(in.ID) {
		return dst
	}
	a := p.asst[in.ID]
	if a == nil {
		a = &asstS{parent: in.ParentID}
		p.asst[in.ID] = a
	}
	a.summary = a.summary || bytes.Equal(in.Summary, []byte("true")) || in.Mode == "compaction" || (in.ParentID != "" && in.ParentID == p.compactReq)
	if in.ModelID != "" {
		a.provider, a.model = in.ProviderID, in.ModelID
	}
	inTurn := p.frame != "" && p.members[a.parent]
	if inTurn && !p.opened {
		p.opened = true
		o := p.obs(telemetry.ObsFrameOpened, src, ms(in.Time.Created))
		o.FrameID, o.Model = p.frame, a.model
		dst = append(dst, o)
	}
	if in.Time.Completed <= 0 {
		return dst
	}
	// Completed: settle it.
	delete(p.asst, in.ID)
	p.settled.add(in.ID)
	at := ms(in.Time.Completed)
	if a.summary {
		if a.parent == p.compactReq && p.compactReq != "" {
			p.compactReq = ""
			if in.Error != nil {
				o := p.obs(telemetry.ObsAPIError, src, at)
				o.Trigger = in.Error.Name
				return append(dst, o)
			}
			o := p.obs(telemetry.ObsCompacted, src, at)
			o.Trigger, o.PreTokens, o.Model, o.ID = p.compactTrigger, p.compactPre, a.model, a.parent
			o.Window = p.window(a.provider, a.model)
			if o.Window == 0 {
				o.Window = p.lastWindow
			}
			return append(dst, o)
		}
		return dst
	}
	if !a.usage && in.Error == nil {
		dst = p.usage(dst, a, in.Tokens, at, src)
	}
	if !inTurn {
		return dst
	}
	end := ""
	switch {
	case in.Error != nil && in.Error.Name == "MessageAbortedError":
		end = "aborted"
	case in.Error != nil:
		o := p.obs(telemetry.ObsAPIError, src, at)
		o.Trigger, o.FrameID = in.Error.Name, p.frame
		dst = append(dst, o)
		end = "error"
	case in.Finish != "" && in.Finish != "tool-calls" && in.Finish != "unknown" && a.parent == p.newest:
		// OpenCode's loop stops when the last answer's parentID is the
		// latest user message (read in the 1.18.33 bundle); an answer to an
		// earlier one means a queued prompt comes next.
		end = in.Finish
	}
	if end == "" {
		return dst
	}
	o := p.obs(telemetry.ObsFrameEnded, src, at)
	o.FrameID, o.Trigger, o.Model = p.frame, end, a.model
	p.frame, p.opened = "", false
	clear(p.members)
	clear(p.asst)
	return append(dst, o)
}
