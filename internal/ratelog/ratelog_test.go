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
