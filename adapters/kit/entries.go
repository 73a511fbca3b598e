package kit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lifeloop/lifeloop/telemetry"
)

// parser reads session-entry lines: {"type", "id", "parentId",
// "timestamp", ...}, the JSONL entries a harness of this format appends
// to its session (in a file, or in rows of its database).
//
// Rules:
//   - session (the header): ObsHarnessSession with its id and cwd.
//   - model_change: remembers provider/modelId, whose window the
//     harness's configuration gives.
//   - message, role user: the n-th user message of the file. With no turn
//     open it opens one: ObsFrameOpening, frame id "<session id>#<n>"
//     (FrameID; a hook bridge numbers prompts the same way). Inside an
//     open turn (a steering message after a tool result) it is
//     ObsUserMessage.
//   - message, role assistant: the first of a turn is ObsFrameOpened (with
//     its model). Its usage is ObsUsage: Tokens = usage.totalTokens (else
//     input + output + cacheRead + cacheWrite; the size the harness itself compares
//     with the window to compact), Window = the model's contextWindow; a
//     failed call (zero usage) reports none. stopReason toolUse keeps the
//     turn open; stop, length and aborted end it (ObsFrameEnded, Trigger =
//     stopReason); error is ObsAPIError and ends the turn at the next user
//     message unless a retry answers first.
//   - compaction: ObsCompacted, PreTokens = tokensBefore, PostTokens 0
//     (unknown: the harness measures the compacted context only with the next
//     reply, whose usage then reports it), Trigger "extension" when
//     fromHook, else "harness" (the format records no threshold/manual/overflow
//     reason in the file).
type parser struct {
	kind      telemetry.SourceKind
	fromHook  string // the trigger of a compaction marked fromHook
	windows   map[string]int64
	sessionID string
	model     string // provider/modelId
	users     int
	frame     string
	opened    bool
	failed    bool // the open turn's last call failed
}

// NewEntryParser returns the parser of session entries (the rules above):
// kind names the harness's store in provenance, windows maps
// "provider/model" to the model's context window, and fromHook is the
// trigger of a compaction entry marked fromHook.
func NewEntryParser(kind telemetry.SourceKind, windows map[string]int64, fromHook string) telemetry.Parser {
	return &parser{kind: kind, fromHook: fromHook, windows: windows}
}

// SourceKind implements telemetry.Parser.
func (p *parser) SourceKind() telemetry.SourceKind { return p.kind }

type entry struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	Provider  string `json:"provider"`
	ModelID   string `json:"modelId"`
	Message   *struct {
		Role         string `json:"role"`
		Provider     string `json:"provider"`
		Model        string `json:"model"`
		StopReason   string `json:"stopReason"`
		ErrorMessage string `json:"errorMessage"`
		Usage        *struct {
			Input       *int64 `json:"input"`
			Output      *int64 `json:"output"`
			CacheRead   int64  `json:"cacheRead"`
			CacheWrite  int64  `json:"cacheWrite"`
			TotalTokens *int64 `json:"totalTokens"`
		} `json:"usage"`
	} `json:"message"`
	TokensBefore *int64 `json:"tokensBefore"`
	FromHook     bool   `json:"fromHook"`
}

// Parse implements telemetry.Parser.
func (p *parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var e entry
	if err := json.Unmarshal(line, &e); err != nil {
		return dst, err
	}
	if e.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(e.Timestamp), Model: p.modelName()}
	switch e.Type {
	case "session":
		if e.ID != "" && e.ID != p.sessionID {
			p.sessionID = e.ID
			o := base
			o.Kind = telemetry.ObsHarnessSession
			o.Cwd = e.Cwd
			dst = append(dst, p.stamp(o))
		}
	case "model_change":
		if e.Provider != "" && e.ModelID != "" {
			p.model = e.Provider + "/" + e.ModelID
		}
	case "message":
		if e.Message != nil {
			dst = p.message(dst, &e, base)
		}
	case "compaction":
		if e.TokensBefore == nil {
			return dst, errors.New("compaction entry without tokensBefore")
		}
		o := base
		o.Kind = telemetry.ObsCompacted
		o.FrameID = p.frame
		o.Window = p.window()
		o.PreTokens = *e.TokensBefore
		o.Trigger = "harness"
		if e.FromHook {
			o.Trigger = p.fromHook
		}
		dst = append(dst, p.stamp(o))
	}
	return dst, nil
}

func (p *parser) message(dst []telemetry.Observation, e *entry, base telemetry.Observation) []telemetry.Observation {
	m := e.Message
	switch m.Role {
	case "user":
		p.users++
		if p.frame != "" && !p.failed {
			o := base
			o.Kind = telemetry.ObsUserMessage
			o.FrameID = p.frame
			return append(dst, p.stamp(o))
		}
		if p.frame != "" {
			dst = p.end(dst, base, "error")
		}
		p.frame, p.opened, p.failed = FrameID(p.sessionID, p.users), false, false
		o := base
		o.Kind = telemetry.ObsFrameOpening
		o.FrameID = p.frame
		o.Window = p.window()
		return append(dst, p.stamp(o))
	case "assistant":
		if m.Provider != "" && m.Model != "" {
			p.model = m.Provider + "/" + m.Model
			base.Model = p.modelName()
		}
		if p.frame != "" && !p.opened {
			p.opened = true
			o := base
			o.Kind = telemetry.ObsFrameOpened
			o.FrameID = p.frame
			o.Window = p.window()
			dst = append(dst, p.stamp(o))
		}
		if u := m.Usage; u == nil || (u.TotalTokens == nil && u.Input == nil && u.Output == nil) {
			// The format records usage (zeros for a failed call) on
			// every assistant message: one without is a format this
			// parser no longer reads, and pressure goes blind.
			o := base
			o.Kind = telemetry.ObsUnreadable
			o.FrameID = p.frame
			o.Detail = "an assistant message without a readable usage (totalTokens, input, output)"
			dst = append(dst, p.stamp(o))
		} else {
			tokens := deref(u.TotalTokens)
			if tokens == 0 {
				tokens = deref(u.Input) + deref(u.Output) + u.CacheRead + u.CacheWrite
			}
			if tokens > 0 {
				o := base
				o.Kind = telemetry.ObsUsage
				o.FrameID = p.frame
				o.Tokens = tokens
				o.Window = p.window()
				dst = append(dst, p.stamp(o))
			}
		}
		switch m.StopReason {
		case "toolUse":
			p.failed = false
		case "error":
			p.failed = true
			o := base
			o.Kind = telemetry.ObsAPIError
			o.FrameID = p.frame
			dst = append(dst, p.stamp(o))
		default:
			if p.frame != "" {
				dst = p.end(dst, base, m.StopReason)
			}
		}
	}
	return dst
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// end closes the open turn.
func (p *parser) end(dst []telemetry.Observation, base telemetry.Observation, reason string) []telemetry.Observation {
	o := base
	o.Kind = telemetry.ObsFrameEnded
	o.FrameID = p.frame
	o.Trigger = reason
	p.frame, p.opened, p.failed = "", false, false
	return append(dst, p.stamp(o))
}

func (p *parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	return o
}

// window is the current model's contextWindow, 0 when unknown.
func (p *parser) window() int64 { return p.windows[p.model] }

// modelName is the current model id without its provider.
func (p *parser) modelName() string {
	_, id, _ := strings.Cut(p.model, "/")
	return id
}

// FrameID is the frame id of the n-th user message (1-based) of session
// sessionID: "<sessionID>#<n>".
func FrameID(sessionID string, n int) string { return fmt.Sprintf("%s#%d", sessionID, n) }
