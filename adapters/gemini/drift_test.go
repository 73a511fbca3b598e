package gemini_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/gemini"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/observe/observetest"
)

// watchChat follows text (written to a file) from its start and returns the
// moments observed until the watcher has been quiet for a second.
func watchChat(t *testing.T, text string) []moment.Moment {
	t.Helper()
	return observetest.WatchText(t, gemini.Harness{}, "session-2026-11-23T13-54-3c9f4c1e.jsonl", text)
}

func degradedOf(ms []moment.Moment) []moment.Moment { return observetest.Degraded(ms) }

// A Gemini CLI release that changes the usage of its gemini records
// blinds context pressure: the watcher says so once (not once per
// record), naming what it could not read; frames still come. A record
// written before its usage is known (tokens null) and a record type the
// parser does not know stay silent.
func TestTelemetryDrift(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "gemini-tool-turn.chat.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	unknown := `{"id":"x1","timestamp":"2026-11-23T13:54:40.000Z","type":"brand-new-record","payload":{"x":1}}` + "\n"
	pending := `{"id":"x2","timestamp":"2026-11-23T13:54:40.000Z","type":"gemini","content":"","tokens":null,"model":"gemini-2.5-flash"}` + "\n"

	t.Run("as recorded", func(t *testing.T) {
		ms := watchChat(t, string(sample)+pending+unknown)
		if d := degradedOf(ms); len(d) != 0 {
			t.Errorf("capability.degraded for a chat file in the known format: %+v", d)
		}
	})

	t.Run("usage renamed", func(t *testing.T) {
		drifted := strings.ReplaceAll(string(sample), `"total":`, `"totalTokens":`)
		if strings.Count(drifted, `"totalTokens":`) < 2 {
			t.Fatal("the sample has fewer than two gemini records with usage")
		}
		ms := watchChat(t, drifted+unknown)
		observetest.OneDrift(t, ms, "tokens.total")
	})
}
