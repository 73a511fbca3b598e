package copilot

import (
	"bufio"
	"os"
	"path/filepath"
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

// TestParseToolTurn: one prompt with a bash tool call (the real 1.0.102
// sample) is one frame: opening, opened, a usage per model call against
// maxPromptTokens, and its end only after the answer without tool calls.
func TestParseToolTurn(t *testing.T) {
	obs := parseFile(t, "copilot-tool-turn.events.jsonl")
	want := []telemetry.ObsKind{telemetry.ObsHarnessSession, telemetry.ObsFrameOpening, telemetry.ObsFrameOpened, telemetry.ObsUsage, telemetry.ObsUsage, telemetry.ObsFrameEnded}
	if got := kinds(obs); !equalKinds(got, want) {
		t.Fatalf("kinds = %v, want %v", got, want)
	}
	const sid = "d787d370-78e2-4fe0-b72c-5c14edff65b9"
	frame := FrameID(sid, "f25036c7-ac71-4d8d-a24b-9965d4014916")
	for _, o := range obs {
		if o.HarnessSessionID != sid || o.HarnessVersion != "1.0.102" {
			t.Errorf("%s: session %q version %q", o.Kind, o.HarnessSessionID, o.HarnessVersion)
		}
		if o.Kind != telemetry.ObsHarnessSession && o.FrameID != frame {
			t.Errorf("%s: frame %q, want %q", o.Kind, o.FrameID, frame)
		}
	}
	if obs[0].Cwd != "/home/dev/project" {
		t.Errorf("cwd %q", obs[0].Cwd)
	}
	if u := obs[3]; u.Tokens != 12 || u.Window != 936000 || u.Model != "claude-sonnet-4.6" {
		t.Errorf("usage %d of %d (%s), want 12 of 936000 (claude-sonnet-4.6)", u.Tokens, u.Window, u.Model)
	}
	if e := obs[5]; e.Trigger != "stop" {
		t.Errorf("frame ended with %q, want stop", e.Trigger)
	}
}

// TestParseCompaction: the sample where Copilot compacted at its
// threshold (prompt limit 20000, 19000 tokens reported) gives usage
// against that limit and one compaction with the runtime's before and
// after.
func TestParseCompaction(t *testing.T) {
	obs := parseFile(t, "copilot-compact.events.jsonl")
	var comp *telemetry.Observation
	for i, o := range obs {
		if o.Kind == telemetry.ObsUsage && (o.Tokens != 19000 || o.Window != 20000) {
			t.Errorf("usage %d of %d, want 19000 of 20000", o.Tokens, o.Window)
		}
		if o.Kind == telemetry.ObsCompacted {
			if comp != nil {
				t.Fatal("two compactions")
			}
			comp = &obs[i]
		}
	}
	if comp == nil {
		t.Fatalf("no compaction in %v", kinds(obs))
	}
	if comp.Trigger != "auto" || comp.PreTokens != 12560 || comp.PostTokens != 12467 || comp.ID != "97280d1d-348b-40d0-85b6-ec1b69c07ab7" {
		t.Errorf("compaction %+v", *comp)
	}
}

// TestParseResume: three runs of one session (-p, --resume, --continue)
// are three frames with distinct ids, each ended; the session id is
// reported once.
func TestParseResume(t *testing.T) {
	obs := parseFile(t, "copilot-resume.events.jsonl")
	frames := map[string]int{}
	sessions := 0
	for _, o := range obs {
		switch o.Kind {
		case telemetry.ObsHarnessSession:
			sessions++
		case telemetry.ObsFrameOpening, telemetry.ObsFrameEnded:
			frames[o.FrameID]++
		}
	}
	if sessions != 1 || len(frames) != 3 {
		t.Fatalf("%d session ids, frames %v; want 1 and 3", sessions, frames)
	}
	for f, n := range frames {
		if n != 2 {
			t.Errorf("frame %s: %d of opening+ended, want 2", f, n)
		}
	}
}

// TestParseFollowedFromResume: a file followed from a session.resume on
// (lifeloop run --resume=ID follows it from its end) names its session by
// its folder.
func TestParseFollowedFromResume(t *testing.T) {
	p := NewParser()
	src := telemetry.Provenance{Path: "/h/.copilot/session-state/5ce24f96-a2f0-4570-ba95-5ddd09133609/events.jsonl"}
	obs, err := p.Parse(nil, []byte(`{"type":"session.resume","data":{"selectedModel":"m"},"id":"x","timestamp":"2026-12-02T04:30:01.397Z","parentId":null}`), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != 1 || obs[0].Kind != telemetry.ObsHarnessSession || obs[0].HarnessSessionID != "5ce24f96-a2f0-4570-ba95-5ddd09133609" {
		t.Fatalf("%+v", obs)
	}
}

// TestParseUnreadableUsage: a usage record of another shape is reported
// as drift, not as zero tokens; unknown record types are skipped.
func TestParseUnreadableUsage(t *testing.T) {
	p := NewParser()
	obs, err := p.Parse(nil, []byte(`{"type":"session.usage_record","data":{"usage":{"prompt":12}}}`), telemetry.Provenance{})
	if err != nil || len(obs) != 1 || obs[0].Kind != telemetry.ObsUnreadable {
		t.Fatalf("%+v %v", obs, err)
	}
	if obs, err = p.Parse(nil, []byte(`{"type":"model.turn_started","data":{"x":1}}`), telemetry.Provenance{}); err != nil || len(obs) != 0 {
		t.Fatalf("%+v %v", obs, err)
	}
	if _, err = p.Parse(nil, []byte(`not json`), telemetry.Provenance{}); err == nil {
		t.Fatal("no error for a line that is not JSON")
	}
}

func equalKinds(a, b []telemetry.ObsKind) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
