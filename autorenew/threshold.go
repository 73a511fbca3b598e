package autorenew

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Threshold is when a session's context is full enough to renew: a
// percentage of the model's window, or a number of tokens.
type Threshold struct {
	Percent float64 // in (0, 100); 0 when Tokens is set
	Tokens  int64   // > 0; 0 when Percent is set
}

// ParseThreshold reads "70%" or "70.5%" (a percentage of the window,
// above 0 and below 100) or "150000", "150k", "1.5M" (a token count
// above 0). It refuses anything else, naming what it expects.
func ParseThreshold(s string) (Threshold, error) {
	in := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(in, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Threshold{}, thresholdError(s)
		}
		if v <= 0 || v >= 100 {
			return Threshold{}, fmt.Errorf("threshold %q: a percentage of the context window must be above 0%% and below 100%% (70%%)", s)
		}
		return Threshold{Percent: v}, nil
	}
	num, mult := in, 1.0
	switch {
	case strings.HasSuffix(in, "k"), strings.HasSuffix(in, "K"):
		num, mult = in[:len(in)-1], 1e3
	case strings.HasSuffix(in, "m"), strings.HasSuffix(in, "M"):
		num, mult = in[:len(in)-1], 1e6
	}
	if mult == 1 {
		v, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return Threshold{}, thresholdError(s)
		}
		if v <= 0 {
			return Threshold{}, fmt.Errorf("threshold %q: a token count must be above 0 (150000, 150k)", s)
		}
		return Threshold{Tokens: v}, nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(num, "eExXpP") {
		return Threshold{}, thresholdError(s)
	}
	tokens := v * mult
	if tokens < 1 || tokens > math.MaxInt64/2 {
		return Threshold{}, fmt.Errorf("threshold %q: a token count must be above 0 (150000, 150k)", s)
	}
	if tokens != math.Trunc(tokens) {
		return Threshold{}, fmt.Errorf("threshold %q: a token count must be a whole number of tokens (150000, 150k, 1.5M)", s)
	}
	return Threshold{Tokens: int64(tokens)}, nil
}

func thresholdError(s string) error {
	return fmt.Errorf("threshold %q: give a percentage of the context window (70%%) or a token count (150000, 150k)", s)
}

// String is the threshold as ParseThreshold reads it ("70%", "150000");
// "" for the zero Threshold.
func (t Threshold) String() string {
	switch {
	case t.Tokens > 0:
		return strconv.FormatInt(t.Tokens, 10)
	case t.Percent > 0:
		return strconv.FormatFloat(t.Percent, 'f', -1, 64) + "%"
	}
	return ""
}

// Valid reports whether t is a threshold ParseThreshold could return.
func (t Threshold) Valid() bool {
	return (t.Tokens > 0) != (t.Percent > 0 && t.Percent < 100)
}

// reached reports whether reading r is at or over the threshold t,
// and whether r says enough to tell (a percentage, or tokens, or
// what converts to one).
func (t Threshold) reached(r reading) (over, known bool) {
	if t.Tokens > 0 {
		tok, ok := r.tokenCount()
		return ok && float64(tok) >= float64(t.Tokens), ok
	}
	pct, ok := r.percentOf()
	return ok && pct >= t.Percent, ok
}

// nearly reports whether reading r is within margin of t: margin
// percentage points of the window for a percentage, margin percent of
// the token count for tokens (the futile guard).
func (t Threshold) nearly(r reading, margin float64) (near, known bool) {
	if t.Tokens > 0 {
		tok, ok := r.tokenCount()
		return ok && float64(tok) >= float64(t.Tokens)*(1-margin/100), ok
	}
	pct, ok := r.percentOf()
	return ok && pct >= t.Percent-margin, ok
}
