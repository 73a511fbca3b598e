package renewal

// Policy is the evidence a renewal policy client (`lifeloop autorenew`,
// or `lifeloop run --renew-at`) gives with the renewal it asks for: who
// asked, the pressure that triggered it, the rule's threshold and limits,
// and the handoff note's digest — never its body. The orchestrator
// records it under "policy" in the telemetry_summary of each of the
// renewal's receipts and in renewal.json, so status, top, OTel, OrgLoop
// and HCP can show the renewal as the policy's.
type Policy struct {
	// Client names the policy client (PolicyClientID for lifeloop's own).
	Client string `json:"client"`
	// ThresholdPercent or ThresholdTokens is the rule's threshold (one
	// of them is set).
	ThresholdPercent float64 `json:"threshold_percent,omitempty"`
	ThresholdTokens  int64   `json:"threshold_tokens,omitempty"`
	// TriggerPercent, TriggerTokens and Window are the pressure reading
	// that crossed the threshold.
	TriggerPercent float64 `json:"trigger_percent,omitempty"`
	TriggerTokens  int64   `json:"trigger_tokens,omitempty"`
	Window         int64   `json:"window,omitempty"`
	// NoteDigest and NoteBytes identify the handoff note delivered with
	// the renewal; NoteSource says who wrote it: "builtin", "command", or
	// "builtin_fallback" when the person's handoff command failed.
	NoteDigest string `json:"note_digest,omitempty"`
	NoteBytes  int    `json:"note_bytes,omitempty"`
	NoteSource string `json:"note_source,omitempty"`
	// ThisHour counts this session's policy renewals in the last hour,
	// this one included; PerHour is the limit.
	ThisHour int `json:"renewals_this_hour,omitempty"`
	PerHour  int `json:"per_hour,omitempty"`
}

// PolicyClientID is the client id of lifeloop's own renewal policy.
const PolicyClientID = "lifeloop-autorenew"

// Map returns p as the "policy" object of a receipt's telemetry_summary.
func (p Policy) Map() map[string]any {
	m := map[string]any{"client": p.Client}
	put := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	put("threshold_percent", p.ThresholdPercent, p.ThresholdPercent != 0)
	put("threshold_tokens", p.ThresholdTokens, p.ThresholdTokens != 0)
	put("trigger_percent", p.TriggerPercent, p.TriggerPercent != 0)
	put("trigger_tokens", p.TriggerTokens, p.TriggerTokens != 0)
	put("window", p.Window, p.Window != 0)
	put("note_digest", p.NoteDigest, p.NoteDigest != "")
	put("note_bytes", p.NoteBytes, p.NoteBytes != 0)
	put("note_source", p.NoteSource, p.NoteSource != "")
	put("renewals_this_hour", p.ThisHour, p.ThisHour != 0)
	put("per_hour", p.PerHour, p.PerHour != 0)
	return m
}
