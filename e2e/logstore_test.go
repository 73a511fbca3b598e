package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/testharness"
)

// logStore is a real VictoriaLogs on a 127.0.0.1 port of its own, its
// data under the test's folder: it stores OTLP log records (OTLP/HTTP
// protobuf) and answers LogsQL queries through its query API.
type logStore struct {
	bin, dir string
	port     int
}

// startLogStore starts the VictoriaLogs that `make victorialogs` builds
// (`make test` builds it when it is missing) and waits until it is
// healthy; the test's cleanup kills it. A port taken by a parallel test
// between its pick and the start means a new port and a new try.
func startLogStore(t *testing.T) *logStore {
	t.Helper()
	l := &logStore{bin: filepath.Join(testharness.ModuleRoot(t), ".cache", "victoria-logs"), dir: t.TempDir()}
	if _, err := os.Stat(l.bin); err != nil {
		t.Fatalf("%s is missing: run `make victorialogs` (make test builds it when missing)", l.bin)
	}
	onFreePorts(t, "victoria-logs", func() error { return l.launch(t) })
	return l
}

// launch runs VictoriaLogs on a free port and waits until it is healthy;
// an error when it exits first. The test's cleanup kills it.
func (l *logStore) launch(t *testing.T) error {
	t.Helper()
	l.port = freePort(t)
	proc, err := startBackend(t, "victoria-logs",
		[]string{l.bin, "-httpListenAddr", fmt.Sprintf("127.0.0.1:%d", l.port), "-storageDataPath", filepath.Join(l.dir, "data"), "-loggerLevel", "WARN"},
		[]string{"HOME=" + l.dir, "PATH=/usr/bin:/bin"}, filepath.Join(l.dir, "victoria-logs.log"), fmt.Sprintf("http://127.0.0.1:%d/health", l.port))
	if err == nil {
		t.Cleanup(proc.kill)
	}
	return err
}

// logsEndpoint is its OTLP/HTTP logs URL, for the standard
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT.
func (l *logStore) logsEndpoint() string {
	return fmt.Sprintf("http://127.0.0.1:%d/insert/opentelemetry/v1/logs", l.port)
}

// records returns the log records of session id, through the LogsQL
// query API: one map of fields per record.
func (l *logStore) records(t *testing.T, id string) []map[string]string {
	t.Helper()
	q := url.Values{"query": {fmt.Sprintf(`"service.instance.id":=%q`, id)}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d/select/logsql/query", l.port), bytes.NewBufferString(q.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []map[string]string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]string
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("victoria-logs query: %v: %s", err, sc.Bytes())
		}
		out = append(out, rec)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("victoria-logs query: %s", resp.Status)
	}
	return out
}

// checkStoredLogs holds the log store's records of session id to its
// ledger, through the query API: one record per receipt, its event name
// the receipt's event, lifeloop.sequence kept, its trace id the
// session's and its span id the span the mapping puts it in, a span of
// the trace Jaeger holds (spans).
func checkStoredLogs(t *testing.T, l *logStore, spans []jaegerSpan, state, id string) {
	t.Helper()
	want, receipts := expected(t, state, id)
	var got []map[string]string
	deadline := time.Now().Add(runTimeout)
	for {
		if got = l.records(t, id); len(got) >= len(receipts) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(got) != len(receipts) {
		t.Errorf("session %s: the log store holds %d records, the ledger %d receipts", id, len(got), len(receipts))
	}
	byReceipt := map[string]map[string]string{}
	for _, r := range got {
		rid := r["lifeloop.receipt.id"]
		if _, dup := byReceipt[rid]; dup {
			t.Errorf("session %s: receipt %s stored twice", id, rid)
		}
		byReceipt[rid] = r
	}
	inTrace := map[string]bool{}
	for _, s := range spans {
		inTrace[s.SpanID] = true
	}
	tid := otelmap.New(id).TraceID().String()
	for i, rid := range receipts {
		r, ok := byReceipt[rid]
		if !ok {
			t.Errorf("session %s: receipt %s is not in the log store", id, rid)
			continue
		}
		w := want.Logs[i]
		if r["event_name"] != w.EventName {
			t.Errorf("receipt %s: event name %q, want %q", rid, r["event_name"], w.EventName)
		}
		seq := ""
		for _, a := range w.Attrs {
			if a.Key == otelmap.AttrSequence {
				seq = strconv.FormatInt(a.Value.AsInt64(), 10)
			}
		}
		if seq == "" || r["lifeloop.sequence"] != seq {
			t.Errorf("receipt %s: lifeloop.sequence %q, want %q", rid, r["lifeloop.sequence"], seq)
		}
		if r["trace_id"] != tid {
			t.Errorf("receipt %s: trace id %q, want the session's %s", rid, r["trace_id"], tid)
		}
		if r["span_id"] != w.SpanID.String() || !inTrace[r["span_id"]] {
			t.Errorf("receipt %s (%s): span id %q, want %s, a span of the trace in jaeger", rid, w.EventName, r["span_id"], w.SpanID)
		}
	}
}
