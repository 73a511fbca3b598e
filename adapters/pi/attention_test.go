package pi

import (
	"bufio"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// recordedFacts maps every line of a recorded session file.
func recordedFacts(t *testing.T, name string) []adapters.AttentionFact {
	t.Helper()
	fh, err := os.Open("testdata/attention/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []adapters.AttentionFact
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if f, ok := (Harness{}).AttentionRecord(sc.Bytes()); ok {
			out = append(out, f)
		}
	}
	return out
}

// TestAttentionRecordError: Pi 0.73.1 against a model answering 429 every
// time wrote the error of each of its four attempts (testdata:
// pi-error.session.jsonl): each says stopped_on_error from the session
// file, the error's type and status as the detail, at the line's time.
func TestAttentionRecordError(t *testing.T) {
	fs := recordedFacts(t, "pi-error.session.jsonl")
	if len(fs) != 4 {
		t.Fatalf("%d facts, want one per attempt (4): %+v", len(fs), fs)
	}
	for _, f := range fs {
		if f.Kind != adapters.AttentionClaim || f.State != adapters.AttentionStoppedOnError || f.Source != adapters.AttentionFromTranscript ||
			f.Detail != "rate_limit_error (429)" || f.Evidence != "session:error" || f.At.IsZero() {
			t.Errorf("fact %+v, want stopped_on_error rate_limit_error (429) from the session file", f)
		}
	}
}

// TestAttentionRecordRetried: the first attempt failed (429), Pi's retry
// was answered (pi-error-retried.session.jsonl): the error's episode ends
// with the reply, and the session waits for input.
func TestAttentionRecordRetried(t *testing.T) {
	fs := recordedFacts(t, "pi-error-retried.session.jsonl")
	var states []adapters.AttentionState
	for _, f := range fs {
		states = append(states, f.State)
	}
	if want := []adapters.AttentionState{adapters.AttentionStoppedOnError, adapters.AttentionWaitingForInput}; !slices.Equal(states, want) {
		t.Fatalf("states %v, want %v", states, want)
	}
	tr := attention.NewTracker(fs[0].At.Add(-time.Second))
	tr.Observe(attention.Fact{At: fs[0].At.Add(-time.Second), Kind: attention.TurnStarted, Source: attention.SourceFrame})
	for _, f := range fs {
		tr.Observe(f)
	}
	eps := tr.Episodes()
	if len(eps) != 2 || eps[0].Kind != adapters.AttentionStoppedOnError || eps[0].End.Sub(eps[0].Start) != 2064*time.Millisecond ||
		tr.Current().State != adapters.AttentionWaitingForInput {
		t.Fatalf("episodes %+v, now %+v: want the 429's (2064 ms, until the retry's reply) then waiting_for_input", eps, tr.Current())
	}
}

// TestAttentionRecordOthers: the person's abort is not an error; a tool
// call works; lines without a stop reason map to nothing.
func TestAttentionRecordOthers(t *testing.T) {
	for _, c := range []struct {
		line  string
		ok    bool
		state adapters.AttentionState
	}{
		{`{"type":"message","timestamp":"2026-12-02T12:00:00Z","message":{"role":"assistant","stopReason":"aborted","errorMessage":"Request was aborted"}}`, false, ""},
		{`{"type":"message","timestamp":"2026-12-02T12:00:00Z","message":{"role":"assistant","stopReason":"toolUse"}}`, true, adapters.AttentionWorking},
		{`{"type":"message","timestamp":"2026-12-02T12:00:00Z","message":{"role":"assistant","stopReason":"error","errorMessage":"Connection error."}}`, true, adapters.AttentionStoppedOnError},
		{`{"type":"message","timestamp":"2026-12-02T12:00:00Z","message":{"role":"user","content":"stopReason"}}`, false, ""},
		{`{"type":"session","version":3}`, false, ""},
		{`not json "stopReason"`, false, ""},
	} {
		f, ok := Harness{}.AttentionRecord([]byte(c.line))
		if ok != c.ok || f.State != c.state {
			t.Errorf("AttentionRecord(%s) = %+v %v, want %s %v", c.line, f, ok, c.state, c.ok)
		}
	}
	for msg, want := range map[string]string{
		`429 {"error":{"message":"x","type":"rate_limit_error"},"type":"error"}`: "rate_limit_error (429)",
		`500 internal`:      "http 500",
		`Connection error.`: "error",
		`fetch failed`:      "error",
	} {
		if got := piErrorKind(msg); got != want {
			t.Errorf("piErrorKind(%q) = %q, want %q", msg, got, want)
		}
	}
}
