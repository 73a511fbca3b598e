package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

func TestStatusShowsHarnessDrift(t *testing.T) {
	root := t.TempDir()
	const id = "ses_drift"
	ledger := strings.Join([]string{
		`{"event":"session.starting","telemetry_summary":{"argv0":"claude"}}`,
		`{"event":"session.started","telemetry_summary":{"pid":42,"harness_version":"2.1.400"}}`,
		`{"event":"capability.degraded","telemetry_summary":{"reason":"harness_version_unproven","harness_version":"2.1.400"},"capability_degradations":[{"capability":"telemetry","previous_support":"synthesized","current_support":"partial","evidence":"Claude Code 2.1.400 is newer than the newest version lifeloop's tests proved (2.1.330)"}]}`,
		`{"event":"capability.degraded","telemetry_summary":{"reason":"source_not_found"},"capability_degradations":[{"capability":"telemetry","previous_support":"synthesized","current_support":"unavailable","evidence":"no transcript"}]}`,
		`{"event":"capability.degraded","telemetry_summary":{"reason":"harness_drift","harness_version":"2.1.400","unreadable":"an assistant line without a readable message.usage"},"capability_degradations":[{"capability":"context_pressure","previous_support":"synthesized","current_support":"partial","evidence":"the harness (version 2.1.400) wrote an assistant line without a readable message.usage"}]}`,
	}, "\n") + "\n"
	p := statedir.ReceiptsPath(root, id)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(ledger), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	facts := readHarnessFacts(root, id)
	facts.print(&out)
	got := out.String()
	for _, want := range []string{"harness   version 2.1.400\n", "drift     telemetry synthesized → partial: Claude Code 2.1.400 is newer", "drift     context_pressure synthesized → partial: the harness (version 2.1.400) wrote an assistant line"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "no transcript") || strings.Count(got, "drift") != 2 {
		t.Errorf("status shows more than the drift:\n%s", got)
	}
	// `status --json` carries the same facts.
	b, err := json.Marshal(struct{ harnessFacts }{facts})
	if err != nil || !strings.Contains(string(b), `"harness_version":"2.1.400"`) || strings.Count(string(b), "partial") != 2 {
		t.Errorf("status --json facts: %s %v", b, err)
	}
}
