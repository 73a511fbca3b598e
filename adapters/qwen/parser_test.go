package qwen

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/telemetry"
)

// parseFile runs a new parser over every line of a testdata sample.
func parseFile(t *testing.T, name string) []telemetry.Observation {
	t.Helper()
	path := filepath.Join("testdata", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := NewParser()
	var out []telemetry.Observation
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for n := int64(1); sc.Scan(); n++ {
		if out, err = p.Parse(out, sc.Bytes(), telemetry.Provenance{Path: path, Line: n}); err != nil {
			t.Fatalf("%s:%d: %v", name, n, err)
		}
	}
	return out
}

func kinds(obs []telemetry.Observation) []telemetry.ObsKind {
	out := make([]telemetry.ObsKind, len(obs))
	for i, o := range obs {
		out[i] = o.Kind
	}
	return out
}

// TestParseToolTurn: one prompt with a tool call (the real 0.24.4
// sample, offline against the mock) is one frame: opening, opened, a
// usage per model call against the window the records name, and its end
// only after the answer without a functionCall.
func TestParseToolTurn(t *testing.T) {
	obs := parseFile(t, "qwen-tool-turn.jsonl")
	want := []telemetry.ObsKind{
		telemetry.ObsHarnessSession, telemetry.ObsFrameOpening, telemetry.ObsFrameOpened,
		telemetry.ObsUsage, telemetry.ObsUsage, telemetry.ObsFrameEnded,
	}
	if got := kinds(obs); !slices.Equal(got, want) {
		t.Fatalf("kinds = %v, want %v", got, want)
	}
	const sid = "22222222-2222-4333-8444-555555555555"
	frame := FrameID(sid, "")
	for _, o := range obs {
		if o.HarnessSessionID != sid || o.HarnessVersion != "0.24.4" {
			t.Errorf("%s: session %q version %q", o.Kind, o.HarnessSessionID, o.HarnessVersion)
		}
		if o.Kind != telemetry.ObsHarnessSession {
			if o.FrameID == "" || o.FrameID == frame {
				t.Errorf("%s: frame id %q, want the prompt record's", o.Kind, o.FrameID)
			}
		}
	}
	if obs[0].Cwd != "/tmp/qm/proj" {
		t.Errorf("session cwd %q", obs[0].Cwd)
	}
	for _, o := range obs[3:5] {
		if o.Tokens != 12 || o.Window != 200000 || o.Model != "claude-sonnet-4-5" {
			t.Errorf("usage %+v, want 12 tokens of 200000 (claude-sonnet-4-5)", o)
		}
	}
	if e := obs[5]; e.Trigger != "stop" || e.Source.Line != 8 {
		t.Errorf("frame ended by line %d (%q), want the answer's (line 8, stop)", e.Source.Line, e.Trigger)
	}
}

// TestParseRules: a prompt while a turn is open ends it as interrupted,
// a tool result is mid-turn, a compression record is a compaction, and
// a line that is not a record is an error.
func TestParseRules(t *testing.T) {
	lines := []string{
		`{"uuid":"u1","sessionId":"s","type":"user","cwd":"/p","version":"0.24.4","message":{"role":"user","parts":[{"text":"one"}]}}`,
		`{"uuid":"a1","sessionId":"s","type":"assistant","model":"m","message":{"role":"model","parts":[{"functionCall":{"name":"x"}}]},"usageMetadata":{"promptTokenCount":100},"contextWindowSize":1000}`,
		`{"uuid":"t1","sessionId":"s","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"name":"x"}}]}}`,
		`{"uuid":"u2","sessionId":"s","type":"user","message":{"role":"user","parts":[{"text":"two"}]}}`,
		`{"uuid":"c1","sessionId":"s","type":"system","subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":900,"newTokenCount":200,"triggerReason":"manual"}}}`,
	}
	p := NewParser()
	var obs []telemetry.Observation
	var err error
	for _, l := range lines {
		if obs, err = p.Parse(obs, []byte(l), telemetry.Provenance{}); err != nil {
			t.Fatal(err)
		}
	}
	want := []telemetry.ObsKind{
		telemetry.ObsHarnessSession, telemetry.ObsFrameOpening, telemetry.ObsFrameOpened, telemetry.ObsUsage,
		telemetry.ObsFrameEnded, telemetry.ObsFrameOpening, telemetry.ObsCompacted,
	}
	if got := kinds(obs); !slices.Equal(got, want) {
		t.Fatalf("kinds = %v, want %v", got, want)
	}
	if e := obs[4]; e.Trigger != "interrupted" || e.FrameID != FrameID("s", "u1") {
		t.Errorf("first turn ended %q in %q", e.Trigger, e.FrameID)
	}
	if c := obs[6]; c.Trigger != "manual" || c.PreTokens != 900 || c.PostTokens != 200 || c.FrameID != FrameID("s", "u2") {
		t.Errorf("compaction %+v", c)
	}
	if _, err := p.Parse(nil, []byte(`[1]`), telemetry.Provenance{}); err == nil {
		t.Error("a JSON array parsed without error")
	}
	if _, err := p.Parse(nil, []byte(`{"x":1}`), telemetry.Provenance{}); err != telemetry.ErrNotObject {
		t.Errorf("a record without type: %v, want ErrNotObject", err)
	}
}
