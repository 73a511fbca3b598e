package ratelog

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestOneLinePerKindPerInterval(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	log := slog.New(New(slog.NewTextHandler(&buf, nil), 10*time.Second, func() time.Time { return now })).With("session", "s1")
	for range 100 {
		log.Error("ledger append failed", "err", "no space left on device")
		log.Error("writing session.json failed")
	}
	if n := strings.Count(buf.String(), "\n"); n != 2 {
		t.Fatalf("100 repeats of 2 kinds gave %d lines:\n%s", n, buf.String())
	}
	now = now.Add(11 * time.Second)
	log.Error("ledger append failed")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "suppressed=99") || !strings.Contains(lines[2], "session=s1") {
		t.Fatalf("after the interval: %q", lines)
	}
}

// TestUnlimitedPrefixesPass: records whose message starts with an
// unlimited prefix are never limited; others still are.
func TestUnlimitedPrefixesPass(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(0, 0)
	log := slog.New(New(slog.NewTextHandler(&buf, nil), 10*time.Second, func() time.Time { return now }, "renewal"))
	for range 10 {
		log.Info("renewal done", "attempt", 1)
		log.Warn("renewal failed")
		log.Error("ledger append failed")
	}
	out := buf.String()
	if n, m, k := strings.Count(out, "renewal done"), strings.Count(out, "renewal failed"), strings.Count(out, "ledger append failed"); n != 10 || m != 10 || k != 1 {
		t.Fatalf("renewal done %d, renewal failed %d, ledger append failed %d lines; want 10, 10, 1:\n%s", n, m, k, out)
	}
}
