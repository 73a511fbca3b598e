package otelmap_test

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelid"
	"github.com/lifeloop/lifeloop/internal/otelmap"
)

// The ledgers in testdata were recorded by lifeloop from real runs:
// claude-renewal (a Claude Code TUI session driven to high pressure,
// renewed fresh, one more turn, then SIGTERM), claude-print (`claude -p`),
// sleep-lost (the wrapper killed with SIGKILL, sealed by `lifeloop
// sessions`), sh-signal (a shell that killed itself with SIGTERM).

type mapped struct {
	id      string
	entries int
	out     otelmap.Output
	mapper  *otelmap.Mapper
}

func mapLedger(t *testing.T, name string) mapped {
	t.Helper()
	id := "ses_" + strings.TrimSuffix(name, ".receipts.jsonl")
	m := otelmap.New(id)
	res := mapped{id: id, mapper: m}
	for e, err := range ledger.ReadSince(filepath.Join("testdata", name), 0) {
		if err != nil {
			t.Fatal(err)
		}
		res.entries++
		o := m.Map(e)
		res.out.Spans = append(res.out.Spans, o.Spans...)
		res.out.Logs = append(res.out.Logs, o.Logs...)
		res.out.Metrics = append(res.out.Metrics, o.Metrics...)
	}
	if res.entries == 0 {
		t.Fatalf("%s: empty ledger", name)
	}
	return res
}

func attr(kvs []attribute.KeyValue, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range kvs {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

func spansNamed(out otelmap.Output, name string) []otelmap.Span {
	var s []otelmap.Span
	for _, sp := range out.Spans {
		if sp.Name == name {
			s = append(s, sp)
		}
	}
	return s
}

func TestRenewalLedgerIsOneTrace(t *testing.T) {
	r := mapLedger(t, "claude-renewal.receipts.jsonl")
	sessions := spansNamed(r.out, otelmap.SpanSession)
	incs := spansNamed(r.out, "invoke_agent claude")
	frames := spansNamed(r.out, otelmap.SpanFrame)
	renewals := spansNamed(r.out, otelmap.SpanRenewal)
	if len(sessions) != 1 || len(incs) != 2 || len(frames) != 2 || len(renewals) != 1 || len(r.out.Spans) != 6 {
		t.Fatalf("spans: %d session, %d incarnations, %d frames, %d renewals, %d in all; want 1, 2, 2, 1, 6",
			len(sessions), len(incs), len(frames), len(renewals), len(r.out.Spans))
	}
	root := sessions[0]
	if root.Parent.IsValid() || root.ID != trace.SpanID(otelid.SpanID(r.id, otelid.SessionSpan)) {
		t.Errorf("root span: parent %v id %v", root.Parent, root.ID)
	}
	if v, _ := attr(root.Attrs, otelmap.AttrOutcome); v.AsString() != otelmap.OutcomeCancelled {
		t.Errorf("session outcome %q, want cancelled", v.AsString())
	}
	if v, _ := attr(root.Attrs, otelmap.AttrReason); v.AsString() != "sigterm" {
		t.Errorf("session reason %q, want sigterm", v.AsString())
	}
	for i, inc := range incs {
		if inc.Parent != root.ID {
			t.Errorf("incarnation %d: parent %v, want the session", i+1, inc.Parent)
		}
		if v, _ := attr(inc.Attrs, semconv.GenAIOperationNameKey); v.AsString() != "invoke_agent" {
			t.Errorf("incarnation %d: gen_ai.operation.name %q", i+1, v.AsString())
		}
		for _, k := range []attribute.Key{semconv.GenAIAgentNameKey, semconv.GenAIAgentVersionKey, semconv.GenAIConversationIDKey, semconv.GenAIRequestModelKey} {
			if v, ok := attr(inc.Attrs, k); !ok || v.AsString() == "" {
				t.Errorf("incarnation %d: no %s", i+1, k)
			}
		}
		if frames[i].Parent != inc.ID {
			t.Errorf("frame %d: parent %v, want incarnation %v", i+1, frames[i].Parent, inc.ID)
		}
	}
	conv0, _ := attr(incs[0].Attrs, semconv.GenAIConversationIDKey)
	conv1, _ := attr(incs[1].Attrs, semconv.GenAIConversationIDKey)
	if conv0.AsString() == conv1.AsString() {
		t.Errorf("a fresh renewal starts a new conversation; both incarnations say %q", conv0.AsString())
	}
	ren := renewals[0]
	if ren.Parent != root.ID || len(ren.Links) != 2 || ren.Links[0].SpanID != incs[0].ID || ren.Links[1].SpanID != incs[1].ID {
		t.Errorf("renewal span: parent %v links %+v; want the session, linked to incarnation 1 then 2", ren.Parent, ren.Links)
	}
	if ren.Start.Before(incs[0].Start) || ren.End.After(incs[1].End) || ren.End.Before(incs[1].Start) {
		t.Errorf("renewal span %v–%v outside incarnation 1 start %v … incarnation 2 %v–%v", ren.Start, ren.End, incs[0].Start, incs[1].Start, incs[1].End)
	}
	// The transcript reports a turn's context after the turn's end: each
	// frame still gets its observation, as an event and as its input
	// tokens.
	for i, want := range []int64{80200, 15100} {
		f := frames[i]
		if v, ok := attr(f.Attrs, semconv.GenAIUsageInputTokensKey); !ok || v.AsInt64() != want {
			t.Errorf("frame %d: gen_ai.usage.input_tokens %v, want %d", i+1, v.String(), want)
		}
		if len(f.Events) != 1 || f.Events[0].Name != otelmap.EventPressure || f.Events[0].Time.After(f.End) || f.Events[0].Time.Before(f.Start) {
			t.Errorf("frame %d: events %+v, want one pressure event within the span", i+1, f.Events)
		}
	}
	var util []float64
	for _, p := range r.out.Metrics {
		if p.Name == otelmap.MetricUtilization {
			util = append(util, p.Value)
		}
	}
	if len(util) != 2 || util[0] != 0.802 || util[1] != 0.151 {
		t.Errorf("utilization points %v, want [0.802 0.151]", util)
	}
	if len(r.out.Logs) != r.entries {
		t.Fatalf("%d log records for %d receipts", len(r.out.Logs), r.entries)
	}
	ids := map[trace.SpanID]bool{}
	for _, s := range r.out.Spans {
		ids[s.ID] = true
	}
	for i, l := range r.out.Logs {
		seq, _ := attr(l.Attrs, otelmap.AttrSequence)
		if seq.AsInt64() != int64(i+1) || l.EventName == "" || len(l.Body) == 0 {
			t.Errorf("log %d: sequence %d event %q", i, seq.AsInt64(), l.EventName)
		}
		if !ids[l.SpanID] {
			t.Errorf("log %d (%s) correlated to span %v, which is not in the trace", i, l.EventName, l.SpanID)
		}
	}
	if open := r.mapper.Open(); len(open) != 0 || !r.mapper.Ended() {
		t.Errorf("after session.ended: open spans %v", open)
	}
}

func TestOutcomes(t *testing.T) {
	for _, c := range []struct {
		file    string
		outcome string
		status  codes.Code
		key     attribute.Key
		val     int64
	}{
		{"claude-print.receipts.jsonl", otelmap.OutcomeSuccess, codes.Ok, semconv.ProcessExitCodeKey, 0},
		{"sh-signal.receipts.jsonl", otelmap.OutcomeCancelled, codes.Unset, otelmap.AttrSignal, 15},
		{"sleep-lost.receipts.jsonl", otelmap.OutcomeLost, codes.Error, "", 0},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := mapLedger(t, c.file)
			s := spansNamed(r.out, otelmap.SpanSession)
			if len(s) != 1 {
				t.Fatalf("%d session spans", len(s))
			}
			if v, _ := attr(s[0].Attrs, otelmap.AttrOutcome); v.AsString() != c.outcome || s[0].Status != c.status {
				t.Errorf("outcome %q status %v, want %q %v", v.AsString(), s[0].Status, c.outcome, c.status)
			}
			if c.key != "" {
				if v, ok := attr(s[0].Attrs, c.key); !ok || v.AsInt64() != c.val {
					t.Errorf("%s = %v, want %d", c.key, v.String(), c.val)
				}
			}
		})
	}
}

func TestReplayIsIdentical(t *testing.T) {
	a := mapLedger(t, "claude-renewal.receipts.jsonl")
	b := mapLedger(t, "claude-renewal.receipts.jsonl")
	if !reflect.DeepEqual(a.out, b.out) {
		t.Fatal("mapping the same ledger twice gave different output")
	}
}

// semconvNames are the names of semantic conventions 1.41.0 this mapping
// may use: referring to the package's constants proves each is in it.
var semconvNames = map[string]bool{
	string(semconv.GenAIOperationNameKey):         true,
	string(semconv.GenAIAgentNameKey):             true,
	string(semconv.GenAIAgentVersionKey):          true,
	string(semconv.GenAIConversationIDKey):        true,
	string(semconv.GenAIRequestModelKey):          true,
	string(semconv.GenAIUsageInputTokensKey):      true,
	string(semconv.GenAIResponseFinishReasonsKey): true,
	string(semconv.ProcessPIDKey):                 true,
	string(semconv.ProcessExitCodeKey):            true,
	string(semconv.ErrorTypeKey):                  true,
}

// TestNamesArePinned: every attribute, span, event and metric name the
// mapping emits on the real ledgers is either a semantic-conventions
// 1.41.0 name or in the lifeloop.* namespace.
func TestNamesArePinned(t *testing.T) {
	if otelmap.SemconvVersion != "1.41.0" || otelmap.SchemaURL != "https://opentelemetry.io/schemas/1.41.0" {
		t.Fatalf("pinned version %s (%s): update semconvNames with it", otelmap.SemconvVersion, otelmap.SchemaURL)
	}
	check := func(what, name string) {
		if !semconvNames[name] && !strings.HasPrefix(name, "lifeloop.") {
			t.Errorf("%s %q is neither a semconv %s name nor lifeloop.*", what, name, otelmap.SemconvVersion)
		}
	}
	keys := func(what string, kvs []attribute.KeyValue) {
		for _, kv := range kvs {
			check(what, string(kv.Key))
		}
	}
	for _, f := range []string{"claude-renewal.receipts.jsonl", "claude-print.receipts.jsonl", "sleep-lost.receipts.jsonl", "sh-signal.receipts.jsonl", attentionLedger} {
		r := mapLedger(t, f)
		for _, s := range r.out.Spans {
			if n, ok := strings.CutPrefix(s.Name, "invoke_agent "); ok {
				// GenAI's span name: "invoke_agent {gen_ai.agent.name}".
				if v, _ := attr(s.Attrs, semconv.GenAIAgentNameKey); v.AsString() != n {
					t.Errorf("span %q: agent name %q", s.Name, v.AsString())
				}
			} else {
				check("span", s.Name)
			}
			keys("span attribute", s.Attrs)
			for _, ev := range s.Events {
				check("event", ev.Name)
				keys("event attribute", ev.Attrs)
			}
			for _, l := range s.Links {
				keys("link attribute", l.Attrs)
			}
		}
		for _, l := range r.out.Logs {
			keys("log attribute", l.Attrs)
		}
		for _, m := range r.out.Metrics {
			check("metric", m.Name)
			keys("metric attribute", m.Attrs)
		}
	}
}
