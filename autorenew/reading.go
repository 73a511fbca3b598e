package autorenew

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// reading is one context.pressure_observed of the stream: its
// telemetry_summary's percent, tokens and window (each 0 when absent).
type reading struct {
	at      time.Time
	percent float64
	tokens  int64
	window  int64
}

// readingOf reads a context.pressure_observed receipt's summary.
func readingOf(r contract.LifecycleReceipt) reading {
	s := r.TelemetrySummary
	out := reading{at: receiptTime(r)}
	if v, ok := number(s["percent"]); ok && v >= 0 {
		out.percent = v
	}
	if v, ok := number(s["tokens"]); ok && v >= 0 {
		out.tokens = int64(v)
	}
	if v, ok := number(s["window"]); ok && v > 0 {
		out.window = int64(v)
	}
	return out
}

// percentOf is the reading's share of the window: its percent, else
// tokens over window.
func (r reading) percentOf() (float64, bool) {
	switch {
	case r.percent > 0:
		return r.percent, true
	case r.window > 0:
		return float64(r.tokens) * 100 / float64(r.window), true
	}
	return 0, false
}

// tokenCount is the reading's tokens, else percent of the window.
func (r reading) tokenCount() (int64, bool) {
	switch {
	case r.tokens > 0:
		return r.tokens, true
	case r.percent > 0 && r.window > 0:
		return int64(math.Round(r.percent * float64(r.window) / 100)), true
	}
	return 0, false
}

// receiptTime is a receipt's at_epoch_s.
func receiptTime(r contract.LifecycleReceipt) time.Time { return time.Unix(r.AtEpochS, 0) }

// number reads a JSON number of a telemetry summary (float64 once
// decoded; Go numbers when built in process).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil && !math.IsNaN(f) && !math.IsInf(f, 0)
	}
	return 0, false
}

// text reads a string of a telemetry summary.
func text(v any) string {
	s, _ := v.(string)
	return s
}
