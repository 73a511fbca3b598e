package contract

import (
	"encoding/json"
	"strconv"
)

// A change of a session's attention (docs/attention.md) travels as a
// supervisor.tick with this trigger, carrying the block under the
// telemetry_summary key "attention".
const (
	attentionChanged = "attention_changed"
	summaryAttention = "attention"
)

// orgLoopAttention reads the attention change a receipt records, when it
// is one OrgLoop reports: a supervisor.tick with trigger
// attention_changed whose block is in a waiting state (needs_permission,
// needs_answer, waiting_for_input, stopped_on_error) with an episode.
// The state is the active phase's reason; the dedupe key's step is
// attention.<episode>, so the changes of one episode (a more trusted
// source taking it over) are one transition.
func orgLoopAttention(r LifecycleReceipt) (reason, step string, block map[string]any, ok bool) {
	if r.Event != EventSupervisorTick || r.Status == StatusFailed || summaryString(r.TelemetrySummary, "trigger") != attentionChanged {
		return "", "", nil, false
	}
	block = summaryObject(r.TelemetrySummary[summaryAttention])
	state := summaryString(block, "state")
	episode, _ := summaryInt(block, "episode")
	switch state {
	case "needs_permission", "needs_answer", "waiting_for_input", "stopped_on_error":
	default:
		return "", "", nil, false
	}
	if episode <= 0 {
		return "", "", nil, false
	}
	return state, "attention." + strconv.Itoa(episode), block, true
}

// orgLoopAttentionBlock is payload.attention: the block's facts, without
// the episode a change closed (the event reports the one it opens).
func orgLoopAttentionBlock(block map[string]any) map[string]any {
	out := make(map[string]any, len(block))
	for k, v := range block {
		if k != "closed" {
			out[k] = v
		}
	}
	return out
}

// summaryObject is v as a JSON object: as a ledger's summary holds it, or
// (a summary built in memory) a value that encodes to one; nil otherwise.
func summaryObject(v any) map[string]any {
	if m, ok := v.(map[string]any); ok || v == nil {
		return m
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// orgLoopSessionAttention is a terminal event's payload.attention: the
// block a session.ended carries (the session's waiting, the episode its
// end closed), nil when it carries none.
func orgLoopSessionAttention(sum map[string]any) map[string]any {
	block := summaryObject(sum[summaryAttention])
	if summaryString(block, "state") == "" {
		return nil
	}
	return block
}
