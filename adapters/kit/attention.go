package kit

import (
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// ScreenAttention is the hook and record side of an attention reader
// whose harness tells no attention state through a hook or its files:
// both say nothing. A harness embeds it and defines AttentionScreen, the
// dialog texts it draws.
type ScreenAttention struct{}

// AttentionEvent implements adapters.AttentionReader: no hook is read
// for attention.
func (ScreenAttention) AttentionEvent([]byte, time.Time) (adapters.AttentionFact, bool) {
	return adapters.AttentionFact{}, false
}

// AttentionRecord implements adapters.AttentionReader: the harness's
// files say nothing measured about attention.
func (ScreenAttention) AttentionRecord([]byte) (adapters.AttentionFact, bool) {
	return adapters.AttentionFact{}, false
}
