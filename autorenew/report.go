package autorenew

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/renewal"
)

// Report is what the policy records when it gives up or steps aside:
// the telemetry_summary "policy" object of a capability.degraded receipt
// (Map) and a line for a person (Detail).
type Report struct {
	Reason Reason
	Detail string
	// Evidence is the pressure and limits at the time.
	Evidence renewal.Policy
}

// Map is r as the "policy" object of its receipt's telemetry_summary:
// Evidence.Map() with "decision": "gave_up" (or "fallback" for
// ReasonHandoffFailed), "reason" and "detail".
func (r Report) Map() map[string]any {
	m := r.Evidence.Map()
	if r.Evidence.Client == "" {
		m["client"] = renewal.PolicyClientID
	}
	m["decision"] = "gave_up"
	if r.Reason == ReasonHandoffFailed {
		m["decision"] = "fallback"
	}
	m["reason"] = string(r.Reason)
	m["detail"] = r.Detail
	return m
}

func futileDetail(c Config, rd reading) string {
	t := c.Threshold
	if t.Tokens > 0 {
		return fmt.Sprintf("the new conversation started at %s, within %s %% (%s tokens) of the %s-token threshold: not renewing again",
			readingText(t, rd), num(c.FutileMargin), strconv.FormatInt(int64(math.Round(float64(t.Tokens)*c.FutileMargin/100)), 10), t.String())
	}
	return fmt.Sprintf("the new conversation started at %s of the window, within %s points of the %s threshold: not renewing again",
		readingText(t, rd), num(c.FutileMargin), thresholdText(t))
}

func sessionLimitDetail(c Config, rd reading, n int, free time.Time) string {
	return fmt.Sprintf("%d policy renewals in the last hour already (limit %d): not renewing at %s before %s",
		n, c.PerHour, readingText(c.Threshold, rd), clock(free))
}

func noSafeMomentDetail(c Config, rd reading) string {
	return fmt.Sprintf("no safe moment (the turn ended, none open, no keys typed since) within %s of the pressure crossing %s: not renewing at %s until it crosses again",
		duration(c.WaitMax), thresholdText(c.Threshold), readingText(c.Threshold, rd))
}

func machineLimitDetail(c Config, ev renewal.Policy) string {
	return fmt.Sprintf("no renewal slot free on this machine within %s of the pressure crossing %s: not renewing at %s until it crosses again",
		duration(c.WaitMax), thresholdText(c.Threshold), evidenceText(ev))
}

func refusedDetail(c Config, ev renewal.Policy, why string) string {
	failed := "was refused or failed"
	if why = strings.Join(strings.Fields(why), " "); why != "" {
		failed = "failed (" + why + ")"
	}
	return fmt.Sprintf("the renewal asked at %s %s: not asking again until the pressure crosses %s again",
		evidenceText(ev), failed, thresholdText(c.Threshold))
}

// readingText is the reading as the threshold counts it: "71 %" or
// "151000 tokens".
func readingText(t Threshold, rd reading) string {
	if t.Tokens > 0 {
		if tok, ok := rd.tokenCount(); ok {
			return strconv.FormatInt(tok, 10) + " tokens"
		}
	}
	if pct, ok := rd.percentOf(); ok {
		return num(round1(pct)) + " %"
	}
	return "an unknown pressure"
}

// evidenceText is the trigger reading of ev as readingText says it.
func evidenceText(ev renewal.Policy) string {
	return readingText(Threshold{Tokens: ev.ThresholdTokens, Percent: ev.ThresholdPercent},
		reading{percent: ev.TriggerPercent, tokens: ev.TriggerTokens, window: ev.Window})
}

// thresholdText is "70 %" or "150000 tokens".
func thresholdText(t Threshold) string {
	if t.Tokens > 0 {
		return strconv.FormatInt(t.Tokens, 10) + " tokens"
	}
	return num(t.Percent) + " %"
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func round1(v float64) float64 { return math.Round(v*10) / 10 }

// clock is a time for a person: "13:05:02 UTC".
func clock(t time.Time) string { return t.UTC().Format("15:04:05 UTC") }

// duration is a duration for a person: "30m", "2s".
func duration(d time.Duration) string {
	s := d.String()
	for _, suffix := range []string{"m0s", "h0m"} {
		if len(s) > len(suffix) && s[len(s)-len(suffix):] == suffix {
			s = s[:len(s)-len(suffix)+1]
		}
	}
	return s
}
