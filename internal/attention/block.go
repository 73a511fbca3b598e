package attention

import (
	"encoding/json"
	"time"
)

// BlockKey is the telemetry_summary key under which receipts carry
// attention (docs/contract.md, "Decisions beyond the seed").
const BlockKey = "attention"

// Block is the attention a supervisor.tick carries: the state now, its
// provenance, the session's waiting so far and, on the tick that closed
// one, the episode that just ended. Every reader — top, status, OTel,
// OrgLoop, HCP, the notifiers — takes states and durations from here, so
// they all show the same episodes with the same durations.
type Block struct {
	State    State  `json:"state"`
	Since    int64  `json:"since_epoch_ms"`
	Source   Source `json:"source,omitempty"`
	Evidence string `json:"evidence,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Episode is the open episode's ID (0 when the state is not a
	// waiting one); Turn the number of turns started so far.
	Episode int `json:"episode,omitempty"`
	Turn    int `json:"turn"`
	// WaitedMs is the session's waiting per kind so far, the open
	// episode counted up to the tick.
	WaitedMs map[State]int64 `json:"waited_ms,omitempty"`
	// Closed is the episode this change ended, on that tick only.
	Closed *EpisodeBlock `json:"closed,omitempty"`
}

// EpisodeBlock is one episode as receipts carry it.
type EpisodeBlock struct {
	ID         int    `json:"id"`
	Kind       State  `json:"kind"`
	Source     Source `json:"source,omitempty"`
	Detail     string `json:"detail,omitempty"`
	Turn       int    `json:"turn"`
	Start      int64  `json:"start_epoch_ms"`
	End        int64  `json:"end_epoch_ms,omitempty"`
	DurationMs int64  `json:"duration_ms"`
}

// TurnBlock is the attention a frame.ended carries for its turn: how
// long the turn waited for a person, per kind, and in how many episodes.
type TurnBlock struct {
	WaitedMs map[State]int64 `json:"waited_ms"`
	Episodes int             `json:"episodes"`
}

// BlockOf is t's block at now; closed, when not nil, is the episode the
// latest change ended.
func BlockOf(t *Tracker, now time.Time, closed *Episode) Block {
	cur := t.Current()
	b := Block{State: cur.State, Since: cur.Since.UnixMilli(), Source: cur.Source, Evidence: cur.Evidence,
		Detail: cur.Detail, Episode: cur.Episode, Turn: t.Turn(), WaitedMs: map[State]int64{}}
	for _, e := range t.Episodes() {
		b.WaitedMs[e.Kind] += e.Duration(now).Milliseconds()
	}
	if closed != nil {
		eb := EpisodeBlockOf(*closed, now)
		b.Closed = &eb
	}
	return b
}

// EpisodeBlockOf is e as receipts carry it, up to now while it lasts.
func EpisodeBlockOf(e Episode, now time.Time) EpisodeBlock {
	eb := EpisodeBlock{ID: e.ID, Kind: e.Kind, Source: e.Source, Detail: e.Detail, Turn: e.Turn,
		Start: e.Start.UnixMilli(), DurationMs: e.Duration(now).Milliseconds()}
	if !e.End.IsZero() {
		eb.End = e.End.UnixMilli()
	}
	return eb
}

// TurnBlockOf is the waiting of turn (Tracker.Turn numbering) up to now.
func TurnBlockOf(eps []Episode, turn int, now time.Time) TurnBlock {
	tb := TurnBlock{WaitedMs: map[State]int64{}}
	for _, e := range eps {
		if e.Turn == turn && e.Kind.Waiting() {
			tb.WaitedMs[e.Kind] += e.Duration(now).Milliseconds()
			tb.Episodes++
		}
	}
	return tb
}

// Map returns b as a telemetry_summary value.
func (b Block) Map() map[string]any { return toMap(b) }

// Map returns tb as a telemetry_summary value.
func (tb TurnBlock) Map() map[string]any { return toMap(tb) }

// BlockFrom reads the block a receipt's telemetry_summary carries; ok is
// false when it carries none or it does not parse.
func BlockFrom(summary map[string]any) (Block, bool) {
	var b Block
	return b, fromMap(summary, &b) && b.State != ""
}

// TurnBlockFrom reads the turn block a frame.ended's telemetry_summary
// carries.
func TurnBlockFrom(summary map[string]any) (TurnBlock, bool) {
	var tb TurnBlock
	return tb, fromMap(summary, &tb) && tb.WaitedMs != nil
}

func toMap(v any) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func fromMap(summary map[string]any, v any) bool {
	raw, ok := summary[BlockKey]
	if !ok {
		return false
	}
	b, err := json.Marshal(raw)
	return err == nil && json.Unmarshal(b, v) == nil
}
