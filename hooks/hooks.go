// Package hooks maps the native hooks of Claude Code and Codex to lifecycle
// moments and renders what the harnesses expect back: the hook-protocol
// response on stdout, the per-launch Claude settings and the Codex notify
// override. It is pure: every function works on the bytes it is given and
// performs no I/O.
//
// Decisions:
//
//   - PreToolUse and PostToolUse map to no lifecycle moment: tool activity is
//     not part of the contract's vocabulary. Map returns an empty Moments
//     list for them (and lifeloop never installs them).
//   - Frame ids: Codex hooks carry turn_id, used as the frame id. Claude Code
//     (2.1.197) puts prompt_id on UserPromptSubmit and on every later hook of
//     the same prompt (Stop, SessionEnd), so prompt_id is the frame id. When
//     a Claude hook carries no prompt_id the frame id is derived as
//     "<session_id>#<hash>" where hash is the first 12 hex digits of the
//     SHA-256 of the prompt (UserPromptSubmit) or "<session_id>#current"
//     (Stop), and the moment's summary says frame_id_derived=true; a caller
//     that counts prompts (the supervisor) may override it.
//   - Event ids: only when the harness supplies a stable id (prompt_id,
//     turn_id): "<id>/<event>". Otherwise EventID is empty and the router
//     synthesizes one.
//   - Summaries never carry prompt text or assistant message bodies: only
//     sizes, flags, source, trigger and reason.
package hooks

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lifeloop/lifeloop/contract"
)

// Adapter ids served by this package.
const (
	AdapterClaude = "claude"
	AdapterCodex  = "codex"
)

// Hook event names, as the harnesses spell them. Notify is lifeloop's name
// for the Codex `notify` program call (turn completion, JSON as the last
// argv element).
const (
	SessionStart     = "SessionStart"
	UserPromptSubmit = "UserPromptSubmit"
	PreModelRequest  = "PreModelRequest"
	PreToolUse       = "PreToolUse"
	PostToolUse      = "PostToolUse"
	PreCompact       = "PreCompact"
	PostCompact      = "PostCompact"
	Stop             = "Stop"
	SubagentStop     = "SubagentStop"
	SessionEnd       = "SessionEnd"
	Notify           = "notify"
)

// MaxStdin bounds the hook input a caller should read; larger inputs are
// not hook JSON this package understands.
const MaxStdin = 4 << 20

// ErrUnknownHook is wrapped by Map's error for a hook event the adapter
// does not have.
var ErrUnknownHook = errors.New("unknown hook event")

// ErrInvalidInput is wrapped by Map's error for input that is not the
// hook's JSON object (an invalid_request).
var ErrInvalidInput = errors.New("hook input is not a JSON object")

// Mapped is what one hook call says about the lifecycle.
type Mapped struct {
	// Adapter and Hook echo Map's arguments.
	Adapter string
	Hook    string
	// HarnessSessionID is the harness's session (Claude session_id, Codex
	// session_id or notify thread-id).
	HarnessSessionID string
	TranscriptPath   string
	Cwd              string
	// Moments are the lifecycle moments, in order; empty for hooks that
	// are recorded as nothing (PreToolUse, PostToolUse).
	Moments []MappedMoment
	// Accepts is the manifest placement this hook can deliver a payload to
	// now (pre_session at SessionStart, pre_frame_leading at
	// UserPromptSubmit), else "".
	Accepts contract.ManifestPlacementClass
	// IsNotify is true for a Codex notify call; the Codex TUI also fires
	// notify for a hidden title-generation thread, which a caller that
	// knows the real thread id filters by HarnessSessionID.
	IsNotify bool
	// TurnID is the harness's turn id (Codex turn_id / turn-id), if any.
	TurnID string
}

// MappedMoment is one lifecycle moment derived from a hook.
type MappedMoment struct {
	Event contract.Event
	// Frame is set for frame.* events.
	Frame *contract.FrameContext
	// Summary holds bounded facts (sizes, flags, source, trigger, reason);
	// never prompt or message bodies.
	Summary map[string]any
	// EventID is "<harness id>/<event>" when the hook carries a stable id,
	// else "".
	EventID string
}

// hookInput is the union of the fields lifeloop reads from Claude and
// Codex hook stdin. Unknown fields are tolerated: it is the harness's
// format, not ours.
type hookInput struct {
	SessionID            string  `json:"session_id"`
	TranscriptPath       string  `json:"transcript_path"`
	Cwd                  string  `json:"cwd"`
	HookEventName        string  `json:"hook_event_name"`
	Source               string  `json:"source"`
	Prompt               *string `json:"prompt"`
	PromptID             string  `json:"prompt_id"`
	TurnID               string  `json:"turn_id"`
	Trigger              string  `json:"trigger"`
	Reason               string  `json:"reason"`
	LastAssistantMessage *string `json:"last_assistant_message"`
	StopHookActive       *bool   `json:"stop_hook_active"`
	AgentID              string  `json:"agent_id"`
	AgentType            string  `json:"agent_type"`
	Model                string  `json:"model"`
}

// notifyInput is the Codex notify argv JSON.
type notifyInput struct {
	Type                 string   `json:"type"`
	ThreadID             string   `json:"thread-id"`
	TurnID               string   `json:"turn-id"`
	Cwd                  string   `json:"cwd"`
	Client               string   `json:"client"`
	InputMessages        []string `json:"input-messages"`
	LastAssistantMessage *string  `json:"last-assistant-message"`
}

// Hooks returns the hook events Map understands for adapterID, in the
// order lifeloop installs them; nil for an adapter without hooks.
func Hooks(adapterID string) []string {
	switch adapterID {
	case AdapterClaude:
		return []string{SessionStart, UserPromptSubmit, PreCompact, Stop, SubagentStop, SessionEnd}
	case AdapterCodex:
		return []string{SessionStart, UserPromptSubmit, PreModelRequest, PreCompact, PostCompact, Stop, SubagentStop, SessionEnd}
	}
	return nil
}

// known reports whether hook is a hook event of adapterID (including the
// ignored tool hooks and, for Codex, notify).
func known(adapterID, hook string) bool {
	for _, h := range Hooks(adapterID) {
		if h == hook {
			return true
		}
	}
	switch hook {
	case PreToolUse, PostToolUse:
		return adapterID == AdapterClaude || adapterID == AdapterCodex
	case Notify:
		return adapterID == AdapterCodex
	}
	return false
}

// Map parses one hook call's input (stdin JSON, or for Codex notify the
// argv JSON) and maps it to lifecycle moments. An unknown adapter or hook
// wraps ErrUnknownHook; input that is not a JSON object wraps
// ErrInvalidInput.
func Map(adapterID, hookEvent string, input []byte) (Mapped, error) {
	m := Mapped{Adapter: adapterID, Hook: hookEvent}
	if !known(adapterID, hookEvent) {
		return m, fmt.Errorf("%w %q for adapter %q; known: %v", ErrUnknownHook, hookEvent, adapterID, append(Hooks(adapterID), PreToolUse, PostToolUse))
	}
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return m, fmt.Errorf("%w (%d bytes)", ErrInvalidInput, len(input))
	}
	if hookEvent == Notify {
		return mapNotify(m, trimmed)
	}
	var in hookInput
	if err := json.Unmarshal(trimmed, &in); err != nil {
		return m, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if in.HookEventName != "" && in.HookEventName != hookEvent {
		return m, fmt.Errorf("%w: hook_event_name %q does not match --hook %q", ErrInvalidInput, in.HookEventName, hookEvent)
	}
	m.HarnessSessionID, m.TranscriptPath, m.Cwd, m.TurnID = in.SessionID, in.TranscriptPath, in.Cwd, in.TurnID
	base := map[string]any{"hook": hookEvent}
	sum := func(kv ...any) map[string]any {
		s := make(map[string]any, len(base)+len(kv)/2)
		for k, v := range base {
			s[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			s[kv[i].(string)] = kv[i+1]
		}
		return s
	}
	switch hookEvent {
	case SessionStart:
		m.Accepts = contract.ManifestPreSession
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventSessionStarted, Summary: sum("source", in.Source)})
		if in.Source == "compact" {
			m.Moments = append(m.Moments, MappedMoment{Event: contract.EventContextCompacted, Summary: sum("source", in.Source)})
		}
	case UserPromptSubmit:
		m.Accepts = contract.ManifestPreFrameLeading
		fc, derived, id := frameFor(adapterID, in, true)
		s := sum()
		if in.Prompt != nil {
			s["prompt_bytes"] = len(*in.Prompt)
		}
		if derived {
			s["frame_id_derived"] = true
		}
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameOpening, Frame: fc, Summary: s, EventID: eventID(id, contract.EventFrameOpening)})
	case PreModelRequest:
		fc, derived, id := frameFor(adapterID, in, false)
		s := sum()
		if derived {
			s["frame_id_derived"] = true
		}
		// A tool turn asks the model more than once; the first request
		// opens the frame, later ones repeat the event with the same id.
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameOpened, Frame: fc, Summary: s, EventID: eventID(id, contract.EventFrameOpened)})
	case PreCompact:
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventContextPressureObserved, Summary: sum("trigger", in.Trigger)})
	case PostCompact:
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventContextCompacted, Summary: sum("trigger", in.Trigger)})
	case Stop:
		fc, derived, id := frameFor(adapterID, in, false)
		s := sum()
		if in.LastAssistantMessage != nil {
			s["last_message_bytes"] = len(*in.LastAssistantMessage)
		}
		if in.StopHookActive != nil {
			s["stop_hook_active"] = *in.StopHookActive
		}
		if derived {
			s["frame_id_derived"] = true
		}
		m.Moments = append(m.Moments,
			MappedMoment{Event: contract.EventFrameEnding, Frame: fc, Summary: s, EventID: eventID(id, contract.EventFrameEnding)},
			MappedMoment{Event: contract.EventFrameEnded, Frame: fc, Summary: s, EventID: eventID(id, contract.EventFrameEnded)})
	case SubagentStop:
		// A subagent's end is a subcall frame's end when both the parent
		// frame and the subagent are identifiable; otherwise nothing.
		parent, _, id := frameFor(adapterID, in, false)
		if in.AgentID != "" && id != "" {
			p := parent.FrameID
			fc := &contract.FrameContext{FrameID: id + "/" + in.AgentID, ParentFrameID: &p, FrameClass: contract.FrameSubcall}
			s := sum()
			if in.AgentType != "" {
				s["agent_type"] = in.AgentType
			}
			m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameEnded, Frame: fc, Summary: s, EventID: eventID(fc.FrameID, contract.EventFrameEnded)})
		}
	case SessionEnd:
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventSessionEnding, Summary: sum("reason", in.Reason)})
	case PreToolUse, PostToolUse:
		// Not lifecycle moments (see the package doc).
	}
	return m, nil
}

// mapNotify maps the Codex notify JSON: agent-turn-complete → frame.ended.
func mapNotify(m Mapped, data []byte) (Mapped, error) {
	m.IsNotify = true
	var n notifyInput
	if err := json.Unmarshal(data, &n); err != nil {
		return m, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	m.HarnessSessionID, m.Cwd, m.TurnID = n.ThreadID, n.Cwd, n.TurnID
	if n.Type != "agent-turn-complete" {
		// Other notification types carry no lifecycle moment.
		return m, nil
	}
	if n.TurnID == "" {
		return m, fmt.Errorf("%w: agent-turn-complete without turn-id", ErrInvalidInput)
	}
	s := map[string]any{"hook": Notify, "input_messages": len(n.InputMessages)}
	if n.LastAssistantMessage != nil {
		s["last_message_bytes"] = len(*n.LastAssistantMessage)
	}
	if n.Client != "" {
		s["client"] = n.Client
	}
	fc := &contract.FrameContext{FrameID: n.TurnID, FrameClass: contract.FrameTopLevel}
	m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameEnded, Frame: fc, Summary: s, EventID: eventID(n.TurnID, contract.EventFrameEnded)})
	return m, nil
}

// frameFor returns the top-level frame of a hook call, whether its id was
// derived (no harness id), and the harness id ("" when derived).
func frameFor(adapterID string, in hookInput, opening bool) (*contract.FrameContext, bool, string) {
	id := in.TurnID
	if adapterID == AdapterClaude && in.PromptID != "" {
		id = in.PromptID
	}
	if id != "" {
		return &contract.FrameContext{FrameID: id, FrameClass: contract.FrameTopLevel}, false, id
	}
	derived := in.SessionID + "#current"
	if opening && in.Prompt != nil {
		h := sha256.Sum256([]byte(*in.Prompt))
		derived = in.SessionID + "#" + hex.EncodeToString(h[:6])
	}
	return &contract.FrameContext{FrameID: derived, FrameClass: contract.FrameTopLevel}, true, ""
}

func eventID(id string, ev contract.Event) string {
	if id == "" {
		return ""
	}
	return id + "/" + string(ev)
}
