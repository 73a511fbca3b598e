// Package hooks is the harness-neutral half of native hooks: a harness's
// hooks described as a Spec (names, the lifecycle role each plays, how a
// call names its frame), the mapping of one hook call to lifecycle
// moments, the hook-protocol response carrying a {"payloads":[...]}
// transport envelope, the settings-file shape that runs `lifeloop
// host-hook`, and the host-hook ↔ wrapper messages. Each harness's Spec
// lives in its folder under adapters/. The package is pure: every
// function works on the bytes it is given and performs no I/O.
//
// Decisions:
//
//   - Tool hooks map to no lifecycle moment: tool activity is not part of
//     the contract's vocabulary. A Spec lists them as Ignored; Map returns
//     an empty Moments list for them (and lifeloop never installs them).
//   - Frame ids: Spec.FrameID picks the harness's own id from the call.
//     When it gives none the frame id is derived as "<session_id>#<hash>"
//     where hash is the first 12 hex digits of the SHA-256 of the prompt
//     (a prompt submission) or "<session_id>#current" (other hooks), and
//     the moment's summary says frame_id_derived=true; a caller that
//     counts prompts (the supervisor) may override it.
//   - Event ids: only when the harness supplies a stable id:
//     "<id>/<event>". Otherwise EventID is empty and the router
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
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/contract"
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

// Role is the lifecycle moment a harness hook reports.
type Role int

// Roles.
const (
	// RoleSessionStart: the session started (or resumed, or was compacted
	// when Input.Source is "compact"); a payload can be placed pre_session.
	RoleSessionStart Role = iota + 1
	// RolePromptSubmit: a prompt was submitted (frame.opening); a payload
	// can be placed pre_frame_leading.
	RolePromptSubmit
	// RoleModelRequest: the model is asked (frame.opened; repeated with
	// the same id for each request of a tool turn).
	RoleModelRequest
	// RolePreCompact: the context is about to be compacted.
	RolePreCompact
	// RolePostCompact: the context was compacted.
	RolePostCompact
	// RoleTurnStop: the turn ended (frame.ending and frame.ended).
	RoleTurnStop
	// RoleSubagentStop: a subagent ended (a subcall frame's end).
	RoleSubagentStop
	// RoleSessionEnd: the session is ending.
	RoleSessionEnd
	// RoleAttention: no lifecycle moment (Map returns none), but an
	// attention fact: a permission dialog, a notification, a turn stopped
	// on an error (adapters.AttentionReader reads the call).
	RoleAttention
)

// FrameIDWait bounds how long a Spec.FrameID may wait for a harness's
// files: the hook process waits 2 s in all for its answer
// (internal/hookcall.DefaultTimeout), which must still reach the harness.
const FrameIDWait = 1500 * time.Millisecond

// Hook is one hook lifeloop installs: the harness's name for it and its
// role.
type Hook struct {
	Name string
	Role Role
	// CommandOnly: the harness runs this hook only as a program, never
	// as an HTTP call (SettingsFile keeps it a command hook).
	CommandOnly bool
}

// Custom is a hook the harness maps itself (a program called with its
// JSON as the last argument, say).
type Custom struct {
	// FromArgv: the call's input is its last argument, not stdin.
	FromArgv bool
	// Map turns the (trimmed, non-empty, '{'-led) input into moments on m.
	Map func(m Mapped, input []byte) (Mapped, error)
	// ChainsUser: the call may carry the user's own program for the same
	// hook (ChainFlag), which host-hook runs with the same arguments.
	ChainsUser bool
}

// Spec describes one harness's native hooks.
type Spec struct {
	// Adapter is the harness's adapter id.
	Adapter string
	// Hooks are the hooks lifeloop installs, in order.
	Hooks []Hook
	// Ignored are hooks the harness has that map to no moment.
	Ignored []string
	// Custom are hooks the harness maps itself (not installed in a
	// settings file).
	Custom map[string]Custom
	// FrameID returns the harness's frame id of a call, "" for none. One
	// that waits for the harness's files to catch up with the call waits
	// at most FrameIDWait.
	FrameID func(in Input) string
	// Matcher is the "matcher" of each settings-file group, "" for none.
	Matcher string
	// FlatResponse: the harness reads additionalContext at the top of a
	// hook's answer ({"additionalContext": ...}), not inside
	// hookSpecificOutput (Response).
	FlatResponse bool
}

// Names returns the names of the hooks lifeloop installs, in order.
func (s *Spec) Names() []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s.Hooks))
	for i, h := range s.Hooks {
		out[i] = h.Name
	}
	return out
}

func (s *Spec) role(hook string) (Role, bool) {
	if s == nil {
		return 0, false
	}
	for _, h := range s.Hooks {
		if h.Name == hook {
			return h.Role, true
		}
	}
	return 0, false
}

// known reports whether hook is a hook of the spec (installed, ignored or
// custom).
func (s *Spec) known(hook string) bool {
	if s == nil {
		return false
	}
	if _, ok := s.role(hook); ok {
		return true
	}
	_, custom := s.Custom[hook]
	return custom || slices.Contains(s.Ignored, hook)
}

// Attends reports whether hook is installed for attention only
// (RoleAttention).
func (s *Spec) Attends(hook string) bool {
	r, _ := s.role(hook)
	return r == RoleAttention
}

// MayAttend reports whether a call of hook may tell a wrapper's attention
// tracker something though it maps to no moment: a hook installed for
// attention, or one the spec ignores that a launch installs for attention
// (adapters' LaunchHooks).
func (s *Spec) MayAttend(hook string) bool {
	return s.Attends(hook) || (s != nil && slices.Contains(s.Ignored, hook))
}

// FromArgv reports whether hook's input is the call's last argument.
func (s *Spec) FromArgv(hook string) bool {
	return s != nil && s.Custom[hook].FromArgv
}

// ChainsUser reports whether a call of hook may carry the user's own
// program to run as well (ChainFlag).
func (s *Spec) ChainsUser(hook string) bool {
	return s != nil && s.Custom[hook].ChainsUser
}

// CanInject reports whether hook's response can carry additional context
// into the model request (session start and prompt submission).
func (s *Spec) CanInject(hook string) bool {
	r, _ := s.role(hook)
	return r == RoleSessionStart || r == RolePromptSubmit
}

// Mapped is what one hook call says about the lifecycle.
type Mapped struct {
	// Adapter and Hook echo Map's arguments.
	Adapter string
	Hook    string
	// HarnessSessionID is the harness's session (or thread) id.
	HarnessSessionID string
	TranscriptPath   string
	Cwd              string
	// Moments are the lifecycle moments, in order; empty for hooks that
	// are recorded as nothing (tool hooks).
	Moments []MappedMoment
	// Accepts is the manifest placement this hook can deliver a payload to
	// now (pre_session at session start, pre_frame_leading at a prompt
	// submission), else "".
	Accepts contract.ManifestPlacementClass
	// OtherThreads is true for a call the harness also makes for threads
	// other than the session's own (a hidden helper thread, say); a
	// caller that knows the session's id filters by HarnessSessionID.
	OtherThreads bool
	// TurnID is the harness's turn id, if any.
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

// Input is the union of the fields lifeloop reads from a command hook's
// stdin JSON (the shape several harnesses share).
// Unknown fields are tolerated: it is the harness's format, not ours.
type Input struct {
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
	// Timestamp is the call's time as the harness wrote it (a string or
	// a number), kept raw for a Spec.FrameID that matches the call to
	// the harness's own record of it.
	Timestamp json.RawMessage `json:"timestamp"`
}

// Map parses one hook call's input (stdin JSON, or a custom hook's last
// argument) and maps it to lifecycle moments. A hook the spec does not
// know (or a nil spec) wraps ErrUnknownHook; input that is not a JSON
// object wraps ErrInvalidInput.
func Map(s *Spec, adapterID, hookEvent string, input []byte) (Mapped, error) {
	m := Mapped{Adapter: adapterID, Hook: hookEvent}
	if !s.known(hookEvent) {
		var known []string
		if s != nil {
			known = append(s.Names(), s.Ignored...)
		}
		return m, fmt.Errorf("%w %q for adapter %q; known: %v", ErrUnknownHook, hookEvent, adapterID, known)
	}
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return m, fmt.Errorf("%w (%d bytes)", ErrInvalidInput, len(input))
	}
	if c, ok := s.Custom[hookEvent]; ok {
		return c.Map(m, trimmed)
	}
	var in Input
	if err := json.Unmarshal(trimmed, &in); err != nil {
		return m, fmt.Errorf("%w: %w", ErrInvalidInput, err)
	}
	if in.HookEventName != "" && in.HookEventName != hookEvent {
		return m, fmt.Errorf("%w: hook_event_name %q does not match --hook %q", ErrInvalidInput, in.HookEventName, hookEvent)
	}
	m.HarnessSessionID, m.TranscriptPath, m.Cwd, m.TurnID = in.SessionID, in.TranscriptPath, in.Cwd, in.TurnID
	role, _ := s.role(hookEvent)
	sum := func(kv ...any) map[string]any {
		out := make(map[string]any, 1+len(kv)/2)
		out["hook"] = hookEvent
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(string)] = kv[i+1]
		}
		return out
	}
	frame := func(opening bool) (*contract.FrameContext, map[string]any, string) {
		fc, derived, id := frameFor(s, in, opening)
		out := sum()
		if derived {
			out["frame_id_derived"] = true
		}
		return fc, out, id
	}
	switch role {
	case RoleSessionStart:
		m.Accepts = contract.ManifestPreSession
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventSessionStarted, Summary: sum("source", in.Source)})
		if in.Source == "compact" {
			m.Moments = append(m.Moments, MappedMoment{Event: contract.EventContextCompacted, Summary: sum("source", in.Source)})
		}
	case RolePromptSubmit:
		m.Accepts = contract.ManifestPreFrameLeading
		fc, s, id := frame(true)
		if in.Prompt != nil {
			s["prompt_bytes"] = len(*in.Prompt)
		}
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameOpening, Frame: fc, Summary: s, EventID: EventID(id, contract.EventFrameOpening)})
	case RoleModelRequest:
		// A tool turn asks the model more than once; the first request
		// opens the frame, later ones repeat the event with the same id.
		fc, s, id := frame(false)
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameOpened, Frame: fc, Summary: s, EventID: EventID(id, contract.EventFrameOpened)})
	case RolePreCompact:
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventContextPressureObserved, Summary: sum("trigger", in.Trigger)})
	case RolePostCompact:
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventContextCompacted, Summary: sum("trigger", in.Trigger)})
	case RoleTurnStop:
		fc, s, id := frame(false)
		if in.LastAssistantMessage != nil {
			s["last_message_bytes"] = len(*in.LastAssistantMessage)
		}
		if in.StopHookActive != nil {
			s["stop_hook_active"] = *in.StopHookActive
		}
		m.Moments = append(m.Moments,
			MappedMoment{Event: contract.EventFrameEnding, Frame: fc, Summary: s, EventID: EventID(id, contract.EventFrameEnding)},
			MappedMoment{Event: contract.EventFrameEnded, Frame: fc, Summary: s, EventID: EventID(id, contract.EventFrameEnded)})
	case RoleSubagentStop:
		// A subagent's end is a subcall frame's end when both the parent
		// frame and the subagent are identifiable; otherwise nothing.
		parent, _, id := frameFor(s, in, false)
		if in.AgentID != "" && id != "" {
			p := parent.FrameID
			fc := &contract.FrameContext{FrameID: id + "/" + in.AgentID, ParentFrameID: &p, FrameClass: contract.FrameSubcall}
			out := sum()
			if in.AgentType != "" {
				out["agent_type"] = in.AgentType
			}
			m.Moments = append(m.Moments, MappedMoment{Event: contract.EventFrameEnded, Frame: fc, Summary: out, EventID: EventID(fc.FrameID, contract.EventFrameEnded)})
		}
	case RoleSessionEnd:
		m.Moments = append(m.Moments, MappedMoment{Event: contract.EventSessionEnding, Summary: sum("reason", in.Reason)})
	}
	return m, nil
}

// frameFor returns the top-level frame of a hook call, whether its id was
// derived (no harness id), and the harness id ("" when derived).
func frameFor(s *Spec, in Input, opening bool) (*contract.FrameContext, bool, string) {
	id := in.TurnID
	if s.FrameID != nil {
		id = s.FrameID(in)
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

// EventID returns "<id>/<event>", or "" when the harness gave no id.
func EventID(id string, ev contract.Event) string {
	if id == "" {
		return ""
	}
	return id + "/" + string(ev)
}
