package sink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func rcpt(ev contract.Event, seq uint64, summary map[string]any) contract.LifecycleReceipt {
	return contract.LifecycleReceipt{
		SchemaVersion: contract.ReceiptSchemaVersion, ReceiptID: "lfr_" + string(ev), ClientID: "lifeloop",
		AdapterID: "codex", InvocationID: "inv_1", Event: ev, EventID: "evt_1", Sequence: &seq,
		IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, AtEpochS: 1778100000,
		TelemetrySummary: summary,
	}
}

func closeNow(t *testing.T, s *Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestFileSink(t *testing.T) {
	ended := contract.SessionEndedSummary(contract.ClassifyExit(contract.ExitFacts{Code: 0}), contract.ExitFacts{Code: 0}, time.Time{}, time.Time{}, "")
	receipts := []contract.LifecycleReceipt{
		rcpt(contract.EventSessionStarted, 1, nil),
		rcpt(contract.EventSupervisorTick, 2, nil),
		rcpt(contract.EventSessionEnded, 3, ended),
	}
	tests := []struct {
		format Format
		want   []string // substrings, one per expected line
	}{
		{FormatLifeloop, []string{`"event":"session.started"`, `"event":"supervisor.tick"`, `"event":"session.ended"`}},
		{FormatOrgLoop, []string{`"dedupe_key":"codex:ses_X:started"`, `"dedupe_key":"codex:ses_X:completed"`}},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "events.ndjson")
			if err := os.WriteFile(path, []byte("{\"earlier\":true}\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, tt.format, Options{SessionID: "ses_X", OrgLoopHarness: contract.HarnessCodex})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range receipts {
				s.Write(r)
			}
			closeNow(t, s)
			got := lines(t, path)
			if len(got) != len(tt.want)+1 || got[0] != `{"earlier":true}` {
				t.Fatalf("file lines = %q", got)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i+1], w) {
					t.Errorf("line %d = %s, want %s", i+1, got[i+1], w)
				}
				if tt.format == FormatOrgLoop {
					if err := contract.CheckOrgLoopJSON([]byte(got[i+1])); err != nil {
						t.Errorf("line %d not conformant: %v", i+1, err)
					}
				} else {
					dec := json.NewDecoder(strings.NewReader(got[i+1]))
					dec.DisallowUnknownFields()
					var back contract.LifecycleReceipt
					if err := dec.Decode(&back); err != nil || back.ReceiptID != receipts[i].ReceiptID {
						t.Errorf("line %d does not decode back: %v", i+1, err)
					}
				}
			}
		})
	}
}

func TestFileSinkCreatesPrivateFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.ndjson")
	s, err := Open(path, FormatLifeloop, Options{})
	if err != nil {
		t.Fatal(err)
	}
	closeNow(t, s)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("mode = %v, want 0600", st.Mode().Perm())
	}
}

func TestFDSink(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	s, err := Open("fd:"+strconv.Itoa(int(w.Fd())), FormatLifeloop, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Write(rcpt(contract.EventSessionStarted, 1, nil))
	closeNow(t, s) // closes the descriptor: the reader sees EOF
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || !strings.Contains(line, `"session.started"`) {
		t.Fatalf("line=%q err=%v", line, err)
	}
}

func TestOpenErrors(t *testing.T) {
	tests := []struct{ dest, want string }{
		{filepath.Join(t.TempDir(), "missing", "e.ndjson"), "folder exists"},
		{"fd:abc", "fd:N"},
		{"fd:987", "not open"},
		{"", "empty destination"},
	}
	for _, tt := range tests {
		t.Run(tt.dest, func(t *testing.T) {
			_, err := Open(tt.dest, FormatLifeloop, Options{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := Open(filepath.Join(t.TempDir(), "x"), Format("xml"), Options{}); err == nil {
		t.Fatal("unknown format accepted")
	}
}

// flakyWriter fails while failing is set, and records what it wrote.
type flakyWriter struct {
	mu      sync.Mutex
	failing bool
	buf     bytes.Buffer
	block   chan struct{} // when non-nil, every write waits for it
}

func (f *flakyWriter) Write(p []byte) (int, error) {
	if f.block != nil {
		<-f.block
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failing {
		return 0, errors.New("disk on fire")
	}
	return f.buf.Write(p)
}

func (f *flakyWriter) Close() error { return nil }

func (f *flakyWriter) written() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.buf.String()
}

func (f *flakyWriter) set(failing bool) {
	f.mu.Lock()
	f.failing = failing
	f.mu.Unlock()
}

func TestFailureStreakReportedOnce(t *testing.T) {
	var logBuf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&syncWriter{w: &logBuf}, nil))
	fw := &flakyWriter{failing: true}
	s := newSink("test", FormatLifeloop, Options{Logger: log}, fw, true)
	for i := 0; i < 5; i++ {
		s.Write(rcpt(contract.EventSupervisorTick, uint64(i), nil))
	}
	testutil.WaitFor(t, func() bool { return s.Failures() == 5 })
	w := s.TakeWarnings()
	if len(w) != 1 || w[0].Code != CodeWriteFailed || strings.Contains(w[0].Message, "supervisor.tick") {
		t.Fatalf("warnings = %+v, want one %s without receipt content", w, CodeWriteFailed)
	}
	if again := s.TakeWarnings(); len(again) != 0 {
		t.Fatalf("warnings handed out twice: %+v", again)
	}
	fw.set(false)
	s.Write(rcpt(contract.EventSupervisorTick, 6, nil))
	testutil.WaitFor(t, func() bool { return strings.Contains(fw.written(), `"sequence":6`) })
	fw.set(true)
	s.Write(rcpt(contract.EventSupervisorTick, 7, nil))
	testutil.WaitFor(t, func() bool { return s.Failures() == 6 })
	closeNow(t, s)
	if w := s.TakeWarnings(); len(w) != 1 || w[0].Code != CodeWriteFailed {
		t.Fatalf("second streak warnings = %+v", w)
	}
	logs := logBuf.String()
	if n := strings.Count(logs, "event sink failing"); n != 2 {
		t.Fatalf("failing logged %d times, want 2 (one per streak):\n%s", n, logs)
	}
	if n := strings.Count(logs, "event sink recovered"); n != 1 {
		t.Fatalf("recovery logged %d times, want 1:\n%s", n, logs)
	}
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func TestFullQueueDropsWithoutBlocking(t *testing.T) {
	fw := &flakyWriter{block: make(chan struct{})}
	s := newSink("test", FormatLifeloop, Options{QueueSize: 2}, fw, true)
	for i := 0; i < 50; i++ {
		s.Write(rcpt(contract.EventSupervisorTick, uint64(i), nil))
	}
	// At most one receipt is inside the blocked write and two queued.
	if d := s.Dropped(); d < 47 {
		t.Fatalf("dropped = %d, want >= 47", d)
	}
	w := s.TakeWarnings()
	if len(w) != 1 || w[0].Code != CodeDropped {
		t.Fatalf("warnings = %+v", w)
	}

	// A close deadline while the writer is stuck reports and returns.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); err == nil {
		t.Fatal("Close returned nil while the writer was stuck")
	}
	s.Write(rcpt(contract.EventSupervisorTick, 99, nil)) // after close: dropped, no panic
	close(fw.block)
	closeNow(t, s)
}
