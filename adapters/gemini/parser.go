package gemini

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/lifeloop/lifeloop/telemetry"
)

// Parser reads Gemini CLI chat files (append-only JSONL, measured with
// 0.61.0).
//
// The file's lines:
//   - a header {sessionId, projectHash, startTime, lastUpdated, kind},
//     first, and again each time the session is resumed;
//   - {"$set":{…}} metadata patches: lastUpdated after every message,
//     sessionId, summary, and messages (the whole history, written at
//     start, on resume and when the history is compressed);
//   - {"$rewindTo": id} (/rewind);
//   - message records {id, timestamp, type, content, …}; the CLI appends a
//     record again when it changes it (a "gemini" record gets its tokens,
//     then its toolCalls once the tools ran), so the last record of an id
//     wins.
//
// Rules:
//   - The header's (or a $set's) sessionId: ObsHarnessSession when first
//     seen or changed.
//   - A "user" record with text (not only function responses, not only a
//     hook's <hook_context>) is a prompt: ObsFrameOpening, FrameID =
//     PromptFrameID(session id, prompt) — the id the BeforeAgent and
//     AfterAgent hooks give the same turn — where the prompt is the
//     record's displayContent text (what the user sent, before a hook's
//     context was added), else its content text; the n-th turn with the
//     same id in the file gets ".n" appended (n ≥ 2). A prompt while the
//     previous turn has not ended ends it first (Trigger "interrupted").
//   - The turn's first "gemini" record: ObsFrameOpened (Model = its
//     model).
//   - Every "gemini" record with tokens, once per (id, total): ObsUsage,
//     Tokens = tokens.total (the response's totalTokenCount: prompt +
//     answer + thoughts + tool-use prompt), Window = the model's window ×
//     the compression threshold (the CLI compresses its history there, so
//     pressure is measured against it).
//   - A "gemini" record with answer text and no toolCalls ends the turn:
//     ObsFrameEnded, Trigger "answer". A response that is only a function
//     call has no text (the CLI rejects responses with neither) and is
//     mid-turn. Limitation: a response with text and a function call is
//     written first without its toolCalls (they are added once the tools
//     ran), so the file reads as an ended turn there; the rest of that
//     turn's usage is still reported.
//   - An "info" record "Context compressed from X% to Y%." (the CLI's
//     own notice, written after it replaced the history): ObsCompacted,
//     Trigger "auto", PreTokens = the last usage, PostTokens = the next
//     usage (the observation waits for it; 0 = unknown when a turn ends or
//     another compaction comes first).
type Parser struct {
	threshold float64
	sessionID string
	model     string
	turn      string
	opened    bool
	ended     bool
	lastUsage int64
	seen      map[string]int64 // message id → total already reported
	prompts   map[string]int   // prompt record id → turn number
	frames    map[string]int   // PromptFrameID → turns so named
	pending   *telemetry.Observation
}

// NewParser returns a parser measuring usage against threshold × the
// model's window (defaultThreshold when threshold is not in (0, 1]).
func NewParser(threshold float64) *Parser {
	if threshold <= 0 || threshold > 1 {
		threshold = defaultThreshold
	}
	return &Parser{threshold: threshold, seen: map[string]int64{}, prompts: map[string]int{}, frames: map[string]int{}}
}

// SourceKind implements telemetry.Parser.
func (p *Parser) SourceKind() telemetry.SourceKind { return SourceChat }

// chatLine is the part of a chat-file line the parser reads.
type chatLine struct {
	Set       *setPatch       `json:"$set"`
	SessionID string          `json:"sessionId"`
	Kind      string          `json:"kind"`
	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Model     string          `json:"model"`
	ToolCalls json.RawMessage `json:"toolCalls"`
	Display   json.RawMessage `json:"displayContent"`
	// Tokens is null until the response's usage is known (the record is
	// appended again with it); absent or without a total it is a format
	// this parser no longer reads.
	Tokens json.RawMessage `json:"tokens"`
}

// tokens is a gemini record's usage.
type tokens struct {
	Total *int64 `json:"total"`
}

type setPatch struct {
	SessionID string `json:"sessionId"`
}

type part struct {
	Text             string          `json:"text"`
	FunctionResponse json.RawMessage `json:"functionResponse"`
}

var lastUpdatedOnly = []byte(`{"$set":{"lastUpdated":"`)

// compressedRe is compiled on first use, not at every lifeloop start.
var compressedRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^Context compressed from (\d+)% to (\d+)%`)
})

// Parse implements telemetry.Parser.
func (p *Parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return dst, telemetry.ErrNotObject
	}
	if len(line) < 96 && bytes.HasPrefix(line, lastUpdatedOnly) && bytes.Count(line, []byte(`"`)) == 6 {
		return dst, nil // {"$set":{"lastUpdated":"…"}}, after every message
	}
	var l chatLine
	if err := json.Unmarshal(line, &l); err != nil {
		return dst, err
	}
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(l.Timestamp), Model: p.model}
	switch {
	case l.Set != nil:
		dst = p.session(dst, l.Set.SessionID, base)
	case l.ID == "" && l.SessionID != "":
		if l.Kind == "subagent" {
			return dst, nil
		}
		dst = p.session(dst, l.SessionID, base)
	case l.Type == "user":
		dst = p.user(dst, &l, base)
	case l.Type == "gemini":
		dst = p.gemini(dst, &l, base)
	case l.Type == "info":
		var text string
		if json.Unmarshal(l.Content, &text) == nil {
			if m := compressedRe().FindStringSubmatch(text); m != nil {
				dst = p.flush(dst)
				o := base
				o.Kind = telemetry.ObsCompacted
				o.Trigger = "auto"
				if !p.ended {
					o.FrameID = p.turn // else between turns
				}
				o.PreTokens = p.lastUsage
				o.Window = p.window()
				o.Detail = "context compressed from " + m[1] + "% to " + m[2] + "% of the model's window"
				o = p.stamp(o)
				p.pending = &o
			}
		}
	}
	return dst, nil
}

func (p *Parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	return o
}

func (p *Parser) window() int64 {
	if p.model == "" {
		return 0
	}
	return int64(float64(tokenLimit(p.model)) * p.threshold)
}

func (p *Parser) session(dst []telemetry.Observation, id string, base telemetry.Observation) []telemetry.Observation {
	if id == "" || id == p.sessionID {
		return dst
	}
	p.sessionID = id
	o := base
	o.Kind = telemetry.ObsHarnessSession
	return append(dst, p.stamp(o))
}

// flush emits a held-back compaction without post tokens.
func (p *Parser) flush(dst []telemetry.Observation) []telemetry.Observation {
	if p.pending != nil {
		dst = append(dst, *p.pending)
		p.pending = nil
	}
	return dst
}

// isPrompt reports whether a user record's content is a prompt: text that
// is not only hook context, and no function responses.
func isPrompt(content json.RawMessage) bool {
	if bytes.Contains(content, []byte(`"functionResponse"`)) {
		return false // the key; inside a JSON string its quotes would be escaped
	}
	var text string
	if json.Unmarshal(content, &text) == nil {
		return strings.TrimSpace(text) != ""
	}
	var parts []part
	if json.Unmarshal(content, &parts) != nil {
		return false
	}
	prompt := false
	for _, pt := range parts {
		if len(pt.FunctionResponse) > 0 {
			return false
		}
		t := strings.TrimSpace(pt.Text)
		if t != "" && (!strings.HasPrefix(t, "<hook_context>") || !strings.HasSuffix(t, "</hook_context>")) {
			prompt = true
		}
	}
	return prompt
}

// hasCalls reports whether a gemini record lists tool calls: a non-empty
// array (the line was valid JSON, so no second decode is needed).
func hasCalls(calls json.RawMessage) bool {
	c := bytes.TrimSpace(calls)
	return len(c) > 1 && c[0] == '[' && len(bytes.TrimSpace(c[1:len(c)-1])) > 0
}

// hasText reports whether a gemini record's content carries answer text.
func hasText(content json.RawMessage) bool {
	var text string
	if json.Unmarshal(content, &text) == nil {
		return strings.TrimSpace(text) != ""
	}
	var parts []part
	if json.Unmarshal(content, &parts) != nil {
		return false
	}
	for _, pt := range parts {
		if strings.TrimSpace(pt.Text) != "" {
			return true
		}
	}
	return false
}

// promptText is the text of a prompt record as the hooks see it: its
// displayContent's text parts, else its content's, joined.
func promptText(l *chatLine) string {
	raw := l.Display
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		raw = l.Content
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return text
	}
	var parts []part
	_ = json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, pt := range parts {
		b.WriteString(pt.Text)
	}
	return b.String()
}

// frameOf names the turn a prompt record opens (see Parser).
func (p *Parser) frameOf(l *chatLine) (string, bool) {
	if _, dup := p.prompts[l.ID]; dup {
		return "", false // the same record appended again
	}
	if len(p.prompts) > 4096 {
		clear(p.prompts)
	}
	id := PromptFrameID(p.sessionID, promptText(l))
	p.frames[id]++
	p.prompts[l.ID] = p.frames[id]
	if n := p.frames[id]; n > 1 {
		id += "." + strconv.Itoa(n)
	}
	return id, true
}

func (p *Parser) user(dst []telemetry.Observation, l *chatLine, base telemetry.Observation) []telemetry.Observation {
	if l.ID == "" || !isPrompt(l.Content) {
		return dst
	}
	frame, ok := p.frameOf(l)
	if !ok {
		return dst
	}
	if p.turn != "" && !p.ended {
		o := base
		o.Kind = telemetry.ObsFrameEnded
		o.FrameID = p.turn
		o.Trigger = "interrupted"
		dst = append(dst, p.stamp(o))
	}
	p.turn, p.opened, p.ended = frame, false, false
	o := base
	o.Kind = telemetry.ObsFrameOpening
	o.FrameID = p.turn
	o.Window = p.window()
	return append(dst, p.stamp(o))
}

func (p *Parser) gemini(dst []telemetry.Observation, l *chatLine, base telemetry.Observation) []telemetry.Observation {
	if l.Model != "" {
		p.model = l.Model
		base.Model = l.Model
	}
	if p.turn != "" && !p.opened {
		p.opened = true
		o := base
		o.Kind = telemetry.ObsFrameOpened
		o.FrameID = p.turn
		o.Window = p.window()
		dst = append(dst, p.stamp(o))
	}
	raw := bytes.TrimSpace(l.Tokens)
	var tk tokens
	switch {
	case string(raw) == "null":
	case len(raw) == 0 || json.Unmarshal(raw, &tk) != nil || tk.Total == nil:
		// 0.61.0 writes tokens (null, then the usage with its total) on
		// every gemini record: one without is a format this parser no
		// longer reads, and pressure goes blind.
		o := base
		o.Kind = telemetry.ObsUnreadable
		o.FrameID = p.turn
		o.Detail = "a gemini record without a readable tokens.total"
		dst = append(dst, p.stamp(o))
		tk.Total = nil
	}
	if tk.Total != nil {
		tot := *tk.Total
		if prev, ok := p.seen[l.ID]; !ok || prev != tot || l.ID == "" {
			if len(p.seen) > 4096 {
				clear(p.seen)
			}
			p.seen[l.ID] = tot
			p.lastUsage = tot
			if p.pending != nil {
				p.pending.PostTokens = tot
				dst = p.flush(dst)
			}
			o := base
			o.Kind = telemetry.ObsUsage
			o.FrameID = p.turn
			o.Tokens = tot
			o.Window = p.window()
			dst = append(dst, p.stamp(o))
		}
	}
	if p.turn != "" && !p.ended && !hasCalls(l.ToolCalls) && hasText(l.Content) {
		p.ended = true
		dst = p.flush(dst)
		o := base
		o.Kind = telemetry.ObsFrameEnded
		o.FrameID = p.turn
		o.Trigger = "answer"
		dst = append(dst, p.stamp(o))
	}
	return dst
}
