package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoOpenTelemetrySDK: lifeloop runs on every harness start and never
// links OpenTelemetry; lifeloop-otlp does (docs/otel.md).
func TestNoOpenTelemetrySDK(t *testing.T) {
	for _, p := range lifeloopDeps(t) {
		if strings.HasPrefix(p, "go.opentelemetry.io/") || strings.HasPrefix(p, "google.golang.org/grpc") || strings.HasPrefix(p, "google.golang.org/protobuf") {
			t.Errorf("lifeloop links %s", p)
		}
	}
}

// TestNoTerminalUI: the full-screen `lifeloop top` and its terminal UI
// libraries are lifeloop-top's; lifeloop hands `top` over to it.
func TestNoTerminalUI(t *testing.T) {
	for _, p := range lifeloopDeps(t) {
		if strings.HasPrefix(p, "charm.land/") || strings.HasPrefix(p, "github.com/charmbracelet/") || p == "github.com/mattn/go-runewidth" ||
			p == "github.com/lifeloop/lifeloop/commands/top" || p == "github.com/lifeloop/lifeloop/commands/cli/topcmd" {
			t.Errorf("lifeloop links %s", p)
		}
	}
}

// lifeloopDeps lists the packages lifeloop links, built as `make build`
// builds it.
func lifeloopDeps(t *testing.T) []string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.CommandContext(t.Context(), "go", "list", "-deps", "-tags", "urfave_cli_no_docs,netgo,osusergo", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}
