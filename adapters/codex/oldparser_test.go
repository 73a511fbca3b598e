// The rollout parser as it was before its fast path: the reference the
// differential tests compare the parser with, line by line.

package codex

import (
	"encoding/json"
	"strings"

	"github.com/lifeloop/lifeloop/telemetry"
)

// oldParser reads Codex rollout lines ({timestamp, type, oldPayload}).
//
// Rules:
//   - session_meta: ObsHarnessSession with oldPayload.id (the thread id) and
//     oldPayload.cwd.
//   - turn_context: remembers oldPayload.model for later oldUsage.
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
type oldParser struct {
	sessionID string
	version   string
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
}

// newOldParser returns a parser for Codex rollouts.
func newOldParser() *oldParser { return &oldParser{} }

// SourceKind implements telemetry.Parser.
func (p *oldParser) SourceKind() telemetry.SourceKind { return SourceRollout }

type oldRolloutLine struct {
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

type oldUsage struct {
	TotalTokens int64 `json:"total_tokens"`
}

type oldPayload struct {
	Type               string `json:"type"`
	ID                 string `json:"id"`
	Cwd                string `json:"cwd"`
	Model              string `json:"model"`
	TurnID             string `json:"turn_id"`
	ResponseID         string `json:"response_id"`
	ModelContextWindow int64  `json:"model_context_window"`
	CompactionRespID   string `json:"compaction_response_id"`
	CLIVersion         string `json:"cli_version"`
	lastNamed          bool   // info.last_token_usage names total_tokens
	Info               *struct {
		Total              oldUsage `json:"total_token_usage"`
		Last               oldUsage `json:"last_token_usage"`
		ModelContextWindow int64    `json:"model_context_window"`
	} `json:"info"`
}

// Parse implements telemetry.Parser.
func (p *oldParser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var l oldRolloutLine
	if err := json.Unmarshal(line, &l); err != nil {
		return dst, err
	}
	if l.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	var pl oldPayload
	if len(l.Payload) > 0 && l.Payload[0] == '{' {
		if err := json.Unmarshal(l.Payload, &pl); err != nil {
			return dst, err
		}
		var raw struct {
			Info *struct {
				Last map[string]json.RawMessage `json:"last_token_usage"`
			} `json:"info"`
		}
		if json.Unmarshal(l.Payload, &raw) == nil && raw.Info != nil {
			for k := range raw.Info.Last {
				pl.lastNamed = pl.lastNamed || strings.EqualFold(k, "total_tokens")
			}
		}
	}
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(l.Timestamp), Model: p.model}
	switch l.Type {
	case "session_meta":
		if pl.CLIVersion != "" {
			p.version = pl.CLIVersion
		}
		if pl.ID != "" && pl.ID != p.sessionID {
			p.sessionID = pl.ID
			o := base
			o.Kind = telemetry.ObsHarnessSession
			o.Cwd = pl.Cwd
			dst = append(dst, p.stamp(o))
		}
	case "turn_context":
		if pl.Model != "" {
			p.model = pl.Model
		}
	case "token_usage_record":
		p.lastRespID = pl.ResponseID
	case "compacted":
		dst = p.flush(dst)
		o := base
		o.Kind = telemetry.ObsCompacted
		o.Trigger = "auto"
		o.FrameID = p.turn
		o.Window = p.window
		o.PreTokens = p.lastTotal
		if pl.CompactionRespID != "" && pl.CompactionRespID == p.lastRespFor {
			o.PreTokens = p.prevTotal
		}
		o = p.stamp(o)
		p.pending = &o
	case "event_msg":
		dst = p.event(dst, &pl, base)
	}
	return dst, nil
}

func (p *oldParser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	o.HarnessVersion = p.version
	return o
}

// flush emits a held-back compaction without post tokens.
func (p *oldParser) flush(dst []telemetry.Observation) []telemetry.Observation {
	if p.pending != nil {
		dst = append(dst, *p.pending)
		p.pending = nil
	}
	return dst
}

func (p *oldParser) event(dst []telemetry.Observation, pl *oldPayload, base telemetry.Observation) []telemetry.Observation {
	switch pl.Type {
	case "task_started":
		dst = p.flush(dst)
		p.turn = pl.TurnID
		if pl.ModelContextWindow > 0 {
			p.window = pl.ModelContextWindow
		}
		o := base
		o.FrameID = p.turn
		o.Window = p.window
		o.Kind = telemetry.ObsFrameOpening
		dst = append(dst, p.stamp(o))
		o.Kind = telemetry.ObsFrameOpened
		dst = append(dst, p.stamp(o))
	case "user_message":
		o := base
		o.Kind = telemetry.ObsUserMessage
		o.FrameID = p.turn
		dst = append(dst, p.stamp(o))
	case "token_count":
		if pl.Info == nil {
			return dst
		}
		if !pl.lastNamed {
			o := base
			o.Kind = telemetry.ObsUnreadable
			o.FrameID = p.turn
			o.Detail = "a token_count without a readable info.last_token_usage.total_tokens"
			dst = append(dst, p.stamp(o))
		}
		if pl.Info.ModelContextWindow > 0 {
			p.window = pl.Info.ModelContextWindow
		}
		tot, cum := pl.Info.Last.TotalTokens, pl.Info.Total.TotalTokens
		if p.haveCount && tot == p.lastTotal && cum == p.lastCum && p.pending == nil {
			return dst // the harness repeats a token_count verbatim
		}
		p.prevTotal, p.lastTotal, p.lastCum, p.haveCount = p.lastTotal, tot, cum, true
		p.lastRespFor = p.lastRespID
		if p.pending != nil {
			p.pending.PostTokens = tot
			dst = p.flush(dst)
		}
		o := base
		o.Kind = telemetry.ObsUsage
		o.FrameID = p.turn
		o.Tokens = tot
		o.Window = p.window
		dst = append(dst, p.stamp(o))
	case "task_complete", "turn_aborted":
		dst = p.flush(dst)
		id := pl.TurnID
		if id == "" {
			id = p.turn
		}
		o := base
		o.Kind = telemetry.ObsFrameEnded
		o.FrameID = id
		o.Trigger = pl.Type
		if pl.Type == "turn_aborted" {
			o.Trigger = "aborted"
		}
		if id == p.turn {
			p.turn = ""
		}
		dst = append(dst, p.stamp(o))
	}
	return dst
}
