package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoOpenTelemetrySDK: lifeloop runs on every harness start and never
// links OpenTelemetry; lifeloop-otlp does (docs/otel.md).
func TestNoOpenTelemetrySDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-tags", "urfave_cli_no_docs,netgo,osusergo", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "go.opentelemetry.io/") || strings.HasPrefix(p, "google.golang.org/grpc") || strings.HasPrefix(p, "google.golang.org/protobuf") {
			t.Errorf("lifeloop links %s", p)
		}
	}
}
