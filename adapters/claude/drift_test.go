package claude_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/observe/observetest"
)

// watchTranscript follows text (written to a file) from its start and returns the
// moments observed until the watcher has been quiet for a second.
func watchTranscript(t *testing.T, text string) []moment.Moment {
	t.Helper()
	return observetest.WatchText(t, claude.Harness{}, "3c9f4c1e-0000-4000-8000-000000000000.jsonl", text)
}

func degradedOf(ms []moment.Moment) []moment.Moment { return observetest.Degraded(ms) }

// A Claude release that changes the usage of its assistant lines blinds
// context pressure: the watcher says so once (not once per line), naming
// the version the transcript records and what it could not read; the
// session goes on (frames still come). A record type the parser does not
// know is harmless and stays silent.
func TestTelemetryDrift(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "claude-tool-turn.transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	unknown := `{"type":"brand-new-record","sessionId":"50b5cee6-b206-49d4-b2a9-c196226154be","version":"2.1.197","payload":{"x":1}}` + "\n"

	t.Run("as recorded", func(t *testing.T) {
		ms := watchTranscript(t, string(sample)+unknown)
		if d := degradedOf(ms); len(d) != 0 {
			t.Errorf("capability.degraded for a transcript in the known format: %+v", d)
		}
	})

	t.Run("usage renamed", func(t *testing.T) {
		drifted := strings.NewReplacer(`"input_tokens"`, `"inputTokens"`, `"output_tokens"`, `"outputTokens"`).Replace(string(sample))
		if strings.Count(drifted, `"inputTokens"`) < 2 {
			t.Fatal("the sample has fewer than two assistant lines with usage")
		}
		ms := watchTranscript(t, drifted+unknown)
		d := observetest.OneDrift(t, ms, "message.usage")
		if d.Summary["harness_version"] != "2.1.197" || len(d.Degradations) != 1 || d.Degradations[0].Evidence == nil || !strings.Contains(*d.Degradations[0].Evidence, "2.1.197") {
			t.Errorf("drift names no harness version 2.1.197: %v %+v", d.Summary, d.Degradations)
		}
	})
}
