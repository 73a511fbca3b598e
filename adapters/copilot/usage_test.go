package copilot

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// usageOf parses the sample session file name as if it lay at path,
// starting a new parser (with the previous one's state) at line from.
func usageOf(t *testing.T, name, path string, from int) []adapters.UsageEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []adapters.UsageEntry
	p := Harness{}.NewUsageParser(path, nil)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		if i == from {
			p = Harness{}.NewUsageParser(path, p.State())
		}
		if out, err = p.Parse(out, sc.Bytes()); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	return out
}

// TestUsageTurn: the real tool turn's two model calls, each with the
// provider's tokens, model, provider, the call's id and the turn's frame;
// read again from the middle with the first parser's state, the same.
func TestUsageTurn(t *testing.T) {
	const sid = "d787d370-78e2-4fe0-b72c-5c14edff65b9"
	path := filepath.Join("/home/dev/.copilot/session-state", sid, eventsFile)
	for _, from := range []int{-1, 12} {
		got := usageOf(t, "copilot-tool-turn.events.jsonl", path, from)
		if len(got) != 2 {
			t.Fatalf("from line %d: %d calls, want 2: %+v", from, len(got), got)
		}
		for i, e := range got {
			want := adapters.UsageTokens{Input: 12, Output: 5}
			if e.Tokens != want || e.Model != "claude-sonnet-4.6" || e.Provider != "anthropic" || e.SessionID != sid ||
				e.Project != "/home/dev/project" || e.FrameID != FrameID(sid, "f25036c7-ac71-4d8d-a24b-9965d4014916") || e.Key == "" || e.HasCost {
				t.Errorf("from line %d, call %d: %+v", from, i, e)
			}
		}
		if got[0].Key == got[1].Key {
			t.Errorf("both calls have key %q", got[0].Key)
		}
	}
}

// TestUsageResumedSession: three runs of one session in one file, one
// call each, all in the one session.
func TestUsageResumedSession(t *testing.T) {
	got := usageOf(t, "copilot-resume.events.jsonl", "/x/session-state/s/events.jsonl", -1)
	if len(got) != 3 {
		t.Fatalf("%d calls, want 3", len(got))
	}
	frames := map[string]bool{}
	for _, e := range got {
		frames[e.FrameID] = true
		if e.SessionID != got[0].SessionID || e.SessionID == "" || e.Tokens.Input == 0 {
			t.Errorf("call %+v", e)
		}
	}
	if len(frames) != 3 {
		t.Errorf("frames %v, want one a run", frames)
	}
}

// TestUsageFiles: the session files under $COPILOT_HOME/session-state,
// nothing else.
func TestUsageFiles(t *testing.T) {
	home := t.TempDir()
	want := filepath.Join(home, "session-state", "a", eventsFile)
	for _, p := range []string{want, filepath.Join(home, "session-state", "a", "other.jsonl"), filepath.Join(home, "logs", eventsFile)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Harness{}.UsageFiles(func(k string) string { return map[string]string{homeVar: home}[k] })
	if err != nil || len(got) != 1 || got[0] != want {
		t.Errorf("files %v, %v; want [%s]", got, err, want)
	}
}
