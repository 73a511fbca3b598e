package hcp

import (
	"fmt"
	"strconv"

	"github.com/lifeloop/lifeloop/internal/attention"
)

// The codes of the warnings an attention episode raises.
const (
	WarnNeedsPermission = "attention_needs_permission"
	WarnStoppedOnError  = "attention_stopped_on_error"
)

// StageAttention is the progress stage of a change of attention.
const StageAttention = "attention_changed"

// attentionTick projects a supervisor.tick's attention block (after any
// state_changed it gives, which carries it as metadata.attention): a
// change of attention (trigger attention_changed) is a progress event
// with the block as metadata.attention, and an episode of
// needs_permission or stopped_on_error, the first time it is seen, a
// warning with the block as details.attention.
func (b *batch) attentionTick(sum map[string]any, block attention.Block) {
	raw := b.p.attention
	if trigger, _ := sum["trigger"].(string); trigger == StageAttention {
		msg := "attention: " + string(block.State)
		if block.Detail != "" {
			msg += " (" + block.Detail + ")"
		}
		b.add(Progress, map[string]any{"stage": StageAttention, "message": msg, "metadata": map[string]any{"attention": copyMap(raw)}})
	}
	code := map[attention.State]string{attention.NeedsPermission: WarnNeedsPermission, attention.StoppedOnError: WarnStoppedOnError}[block.State]
	// An episode is its number and its start: numbers start again with a
	// new tracker.
	key := strconv.Itoa(block.Episode) + "@" + strconv.FormatInt(block.Since, 10)
	if code == "" || block.Episode == 0 || key == b.p.warned {
		return
	}
	b.p.warned = key
	msg := "the session waits for a person: " + string(block.State)
	if block.Detail != "" {
		msg += fmt.Sprintf(" (%s)", block.Detail)
	}
	b.add(Warning, map[string]any{"code": code, "message": msg, "details": map[string]any{"attention": copyMap(raw)}})
}

// attentionMetadata adds the session's latest attention block to a
// state_changed's data as metadata.attention.
func (b *batch) attentionMetadata(d map[string]any) {
	if b.p.attention == nil {
		return
	}
	meta, _ := d["metadata"].(map[string]any)
	meta = copyMap(meta)
	meta["attention"] = copyMap(b.p.attention)
	d["metadata"] = meta
}

// attentionMap is the attention block of sum as a map: as the ledger
// holds it (fields this version does not know kept), or block's when a
// receipt built in memory carries another type.
func attentionMap(sum map[string]any, block attention.Block) map[string]any {
	if m, ok := sum[attention.BlockKey].(map[string]any); ok {
		return m
	}
	return block.Map()
}
