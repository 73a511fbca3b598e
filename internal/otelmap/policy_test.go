package otelmap_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"

	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/renewal"
)

// policyEvidence is the "policy" object the wrapper records on each
// receipt of a renewal a policy client asked for.
var policyEvidence = renewal.Policy{
	Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, TriggerTokens: 71300, Window: 100000,
	NoteDigest: "sha256:ab12", NoteBytes: 1234, NoteSource: "builtin", ThisHour: 2, PerHour: 3,
}

// policyLedger is the recorded claude-renewal ledger as a policy client
// would have left it: its renewal's four receipts carry the evidence,
// and its tick of sequence 37 is a policy report instead (a
// capability.degraded saying the policy gave up, futile).
func policyLedger(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "claude-renewal.receipts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		sum, _ := r["telemetry_summary"].(map[string]any)
		switch {
		case sum["reason"] == "renewal":
			sum["policy"] = policyEvidence.Map()
		case r["sequence"] == 37.0:
			report := policyEvidence.Map()
			report["decision"], report["reason"], report["detail"] = "gave_up", "futile", "the new conversation started at 66 %, within 10 points of 70 %"
			r["event"], r["event_id"] = "capability.degraded", "evt_policy_report"
			r["telemetry_summary"] = map[string]any{"policy": report}
			r["capability_degradations"] = []any{map[string]any{
				"capability": "renewal.policy", "previous_support": "synthesized", "current_support": "unavailable",
				"observed_at_epoch_s": r["at_epoch_s"], "evidence": report["detail"], "retry_class": "do_not_retry",
			}}
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func mapPath(t *testing.T, path string) otelmap.Output {
	t.Helper()
	m := otelmap.New("ses_policy")
	var out otelmap.Output
	for e, err := range ledger.ReadSince(path, 0) {
		if err != nil {
			t.Fatal(err)
		}
		o := m.Map(e)
		out.Spans = append(out.Spans, o.Spans...)
		out.Logs = append(out.Logs, o.Logs...)
		out.Metrics = append(out.Metrics, o.Metrics...)
	}
	return out
}

// TestPolicyRenewalAndReport: the renewal span of a policy renewal
// carries its evidence; a person's renewal carries none; a policy report
// is an event on the session span, and its log record keeps the policy
// object.
func TestPolicyRenewalAndReport(t *testing.T) {
	out := mapPath(t, policyLedger(t))
	renewals := spansNamed(out, otelmap.SpanRenewal)
	if len(renewals) != 1 {
		t.Fatalf("%d renewal spans", len(renewals))
	}
	ren := renewals[0].Attrs
	for k, want := range map[attribute.Key]attribute.Value{
		otelmap.AttrPolicyClient:           attribute.StringValue(renewal.PolicyClientID),
		otelmap.AttrPolicyThresholdPercent: attribute.Float64Value(70),
		otelmap.AttrPolicyTriggerPercent:   attribute.Float64Value(71.3),
		otelmap.AttrPolicyTriggerTokens:    attribute.Int64Value(71300),
		otelmap.AttrPolicyWindow:           attribute.Int64Value(100000),
		otelmap.AttrPolicyNoteDigest:       attribute.StringValue("sha256:ab12"),
		otelmap.AttrPolicyNoteBytes:        attribute.Int64Value(1234),
		otelmap.AttrPolicyNoteSource:       attribute.StringValue("builtin"),
		otelmap.AttrPolicyThisHour:         attribute.Int64Value(2),
		otelmap.AttrPolicyPerHour:          attribute.Int64Value(3),
	} {
		if v, ok := attr(ren, k); !ok || v != want {
			t.Errorf("renewal span %s = %v, want %v", k, v.Emit(), want.Emit())
		}
	}
	if _, ok := attr(ren, otelmap.AttrPolicyThresholdTokens); ok {
		t.Error("a percentage threshold also gave a token threshold")
	}

	sessions := spansNamed(out, otelmap.SpanSession)
	if len(sessions) != 1 {
		t.Fatalf("%d session spans", len(sessions))
	}
	var report *otelmap.Event
	for i, ev := range sessions[0].Events {
		if ev.Name == otelmap.EventPolicyGaveUp {
			report = &sessions[0].Events[i]
		}
	}
	if report == nil {
		t.Fatalf("no %s event on the session span: %+v", otelmap.EventPolicyGaveUp, sessions[0].Events)
	}
	if v, _ := attr(report.Attrs, otelmap.AttrPolicyReason); v.AsString() != "futile" {
		t.Errorf("report reason %q", v.AsString())
	}
	if v, _ := attr(report.Attrs, otelmap.AttrPolicyDetail); !strings.Contains(v.AsString(), "within 10 points") {
		t.Errorf("report detail %q", v.AsString())
	}
	var logged bool
	for _, l := range out.Logs {
		if l.EventName != "capability.degraded" {
			continue
		}
		var body struct {
			TelemetrySummary struct {
				Policy map[string]any `json:"policy"`
			} `json:"telemetry_summary"`
		}
		if err := json.Unmarshal(l.Body, &body); err != nil {
			t.Fatal(err)
		}
		logged = body.TelemetrySummary.Policy["reason"] == "futile" && body.TelemetrySummary.Policy["note_digest"] == "sha256:ab12"
		if l.Severity != otelmap.SeverityWarn {
			t.Errorf("report log severity %v, want WARN", l.Severity)
		}
	}
	if !logged {
		t.Error("the report's log record lost its policy object")
	}

	// The same ledger without the evidence: a person's renewal.
	plain := mapLedger(t, "claude-renewal.receipts.jsonl")
	for _, kv := range spansNamed(plain.out, otelmap.SpanRenewal)[0].Attrs {
		if strings.HasPrefix(string(kv.Key), "lifeloop.renewal.policy.") {
			t.Errorf("a person's renewal has %s", kv.Key)
		}
	}
}

// TestDocsNameThePolicyNames: docs/otel.md names every policy attribute
// and event the mapping emits.
func TestDocsNameThePolicyNames(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "otel.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		string(otelmap.AttrPolicyClient), string(otelmap.AttrPolicyThresholdPercent), string(otelmap.AttrPolicyThresholdTokens),
		string(otelmap.AttrPolicyTriggerPercent), string(otelmap.AttrPolicyTriggerTokens), string(otelmap.AttrPolicyWindow),
		string(otelmap.AttrPolicyNoteDigest), string(otelmap.AttrPolicyNoteBytes), string(otelmap.AttrPolicyNoteSource),
		string(otelmap.AttrPolicyThisHour), string(otelmap.AttrPolicyPerHour), string(otelmap.AttrPolicyReason),
		string(otelmap.AttrPolicyDetail), otelmap.EventPolicyGaveUp, otelmap.EventPolicyFallback,
	} {
		if !bytes.Contains(doc, []byte("`"+name+"`")) {
			t.Errorf("docs/otel.md does not name `%s`", name)
		}
	}
}
