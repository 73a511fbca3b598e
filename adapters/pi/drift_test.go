package pi_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/pi"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/observe/observetest"
)

// watchSession follows text (written to a file) from its start and returns the
// moments observed until the watcher has been quiet for a second.
func watchSession(t *testing.T, text string) []moment.Moment {
	t.Helper()
	return observetest.WatchText(t, pi.Harness{}, "2026-11-23T13-54-00-000Z_3c9f4c1e-0000-4000-8000-000000000000.jsonl", text)
}

func degradedOf(ms []moment.Moment) []moment.Moment { return observetest.Degraded(ms) }

// A Pi release that changes the usage of its assistant messages blinds
// context pressure: the watcher says so once (not once per message),
// naming what it could not read; frames still come. An entry type the
// parser does not know stays silent.
func TestTelemetryDrift(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "pi-tool-turn.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	unknown := `{"type":"brand-new-entry","id":"x1","timestamp":"2026-11-23T13:54:40.000Z","payload":{"x":1}}` + "\n"

	t.Run("as recorded", func(t *testing.T) {
		ms := watchSession(t, string(sample)+unknown)
		if d := degradedOf(ms); len(d) != 0 {
			t.Errorf("capability.degraded for a session file in the known format: %+v", d)
		}
	})

	t.Run("as recorded by 1.6.0", func(t *testing.T) {
		b, err := os.ReadFile(filepath.Join("testdata", "pi-1.6-plain-turn.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		if d := degradedOf(watchSession(t, string(b))); len(d) != 0 {
			t.Errorf("capability.degraded for a 1.6.0 session file: %+v", d)
		}
	})

	t.Run("usage renamed", func(t *testing.T) {
		drifted := strings.ReplaceAll(string(sample), `"usage":`, `"tokenUsage":`)
		if strings.Count(drifted, `"tokenUsage":`) < 2 {
			t.Fatal("the sample has fewer than two assistant messages with usage")
		}
		ms := watchSession(t, drifted+unknown)
		observetest.OneDrift(t, ms, "usage")
	})
}
