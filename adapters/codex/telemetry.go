package codex

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
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
	Slack     time.Duration // default telemetry.DefaultSlack
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
// the day before Launch to the day after now (local and UTC) are scanned.
func (c *Discoverer) Candidates() ([]telemetry.Candidate, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	start := c.Launch
	if start.IsZero() {
		start = now()
	}
	days := map[string]bool{}
	for d := start.Add(-24 * time.Hour); !d.After(now().Add(24 * time.Hour)); d = d.Add(12 * time.Hour) {
		days[d.Local().Format("2006/01/02")] = true
		days[d.UTC().Format("2006/01/02")] = true
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
			p := filepath.Join(dir, name)
			born, ok := telemetry.BornAt(p)
			if !ok || (!c.Launch.IsZero() && born.Before(c.Launch.Add(-telemetry.Slack(c.Slack)))) {
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
type Parser struct {
	sessionID string
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
	Info               *struct {
		Total              usage `json:"total_token_usage"`
		Last               usage `json:"last_token_usage"`
		ModelContextWindow int64 `json:"model_context_window"`
	} `json:"info"`
}

// Parse implements telemetry.Parser.
func (p *Parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var l rolloutLine
	if err := json.Unmarshal(line, &l); err != nil {
		return dst, err
	}
	if l.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	var pl payload
	if len(l.Payload) > 0 && l.Payload[0] == '{' {
		if err := json.Unmarshal(l.Payload, &pl); err != nil {
			return dst, err
		}
	}
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(l.Timestamp), Model: p.model}
	switch l.Type {
	case "session_meta":
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

func (p *Parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
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

func (p *Parser) event(dst []telemetry.Observation, pl *payload, base telemetry.Observation) []telemetry.Observation {
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
