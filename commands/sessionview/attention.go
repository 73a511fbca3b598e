package sessionview

import (
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// Attention is whether a session waits for a person, as the latest
// supervisor.tick carrying an attention block says it (attention.Block:
// state, since, source, evidence, detail, episode, turn, waited_ms per
// kind). Views take states and durations from the block as recorded, so
// they show what OTel and the notifiers show; only the open state's
// length (For) is counted to the view's clock.
type Attention struct {
	attention.Block
	// At is when the tick that carried the block was recorded.
	At time.Time `json:"observed_at"`
	// WaitedSeconds is the block's waited_ms per kind, in seconds.
	WaitedSeconds map[attention.State]float64 `json:"waited_seconds,omitempty"`
	// ForSeconds is how long the state has held at the view's clock
	// (now − since_epoch_ms); set by Stamp.
	ForSeconds float64 `json:"for_seconds"`
}

// AttentionOf reads the attention block of a receipt: a supervisor.tick
// that carries one. ok is false for any other receipt.
func AttentionOf(r contract.LifecycleReceipt) (*Attention, bool) {
	if r.Event != contract.EventSupervisorTick {
		return nil, false
	}
	b, ok := attention.BlockFrom(r.TelemetrySummary)
	if !ok {
		return nil, false
	}
	a := &Attention{Block: b, At: time.Unix(r.AtEpochS, 0).UTC()}
	if len(b.WaitedMs) > 0 {
		a.WaitedSeconds = make(map[attention.State]float64, len(b.WaitedMs))
		for k, ms := range b.WaitedMs {
			a.WaitedSeconds[k] = float64(ms) / 1000
		}
	}
	return a, true
}

// SinceTime is the state's start.
func (a *Attention) SinceTime() time.Time { return time.UnixMilli(a.Since).UTC() }

// For is how long the state has held at now (never negative).
func (a *Attention) For(now time.Time) time.Duration { return max(now.Sub(a.SinceTime()), 0) }

// Stamp returns a copy of a with ForSeconds counted at now (nil for nil).
func (a *Attention) Stamp(now time.Time) *Attention {
	if a == nil {
		return nil
	}
	c := *a
	c.ForSeconds = float64(a.For(now).Milliseconds()) / 1000
	return &c
}

// NeedsPerson reports whether the state waits for a person.
func (a *Attention) NeedsPerson() bool { return a != nil && a.State.Waiting() }

// Urgency ranks the state for views that put sessions needing a person
// first: 0 needs_permission, 1 needs_answer, 2 stopped_on_error, 3
// waiting_for_input, 4 any other state (or none).
func (a *Attention) Urgency() int {
	if a == nil {
		return 4
	}
	switch a.State {
	case attention.NeedsPermission:
		return 0
	case attention.NeedsAnswer:
		return 1
	case attention.StoppedOnError:
		return 2
	case attention.WaitingForInput:
		return 3
	}
	return 4
}

// Label names the state in a few words: "needs permission", "needs
// answer", "error", "waiting", "working", "unknown".
func (a *Attention) Label() string {
	switch a.State {
	case attention.NeedsPermission:
		return "needs permission"
	case attention.NeedsAnswer:
		return "needs answer"
	case attention.StoppedOnError:
		return "error"
	case attention.WaitingForInput:
		return "waiting"
	}
	return string(a.State)
}

// AttentionShown is the attention a view shows: none once the session has ended.
func (s *Summary) AttentionShown() *Attention {
	if s.Terminal {
		return nil
	}
	return s.Attention
}

// LatestAttention reads the ledger of session id under root and returns
// the attention its latest tick carrying one says, nil when none does.
// Lines that are not receipts are skipped.
func LatestAttention(root, id string) *Attention {
	var a *Attention
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err != nil {
			continue
		}
		if got, ok := AttentionOf(e.Receipt); ok {
			a = got
		}
	}
	return a
}
