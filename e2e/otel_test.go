package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// jaegerServer is a real Jaeger v2 (an OpenTelemetry Collector
// distribution) on 127.0.0.1 ports of its own: traces stored in Badger
// under the test's folder (they survive a kill and a restart), metrics on
// its Prometheus exporter, log records printed by its debug exporter into
// its log (Jaeger stores no logs).
type jaegerServer struct {
	bin, dir, config, logPath       string
	otlp, grpc, query, prom, health int
	proc                            *backend // nil while it is not running
}

// jaegerBin is the Jaeger that `make jaeger` builds (`make test` builds
// it when it is missing).
func jaegerBin(t *testing.T) string {
	t.Helper()
	p := filepath.Join(testharness.ModuleRoot(t), ".cache", "jaeger")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is missing: run `make jaeger` (make test builds it when missing)", p)
	}
	return p
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startJaeger(t *testing.T) *jaegerServer {
	t.Helper()
	return startJaegerWith(t, true)
}

// startJaegerWith starts Jaeger; without allSignals it has Jaeger's own
// default shape, a traces pipeline alone (logs and metrics get 404).
func startJaegerWith(t *testing.T, allSignals bool) *jaegerServer {
	t.Helper()
	j := &jaegerServer{bin: jaegerBin(t), dir: t.TempDir()}
	j.config = filepath.Join(j.dir, "jaeger.yaml")
	j.logPath = filepath.Join(j.dir, "jaeger.log")
	t.Cleanup(j.kill)
	onFreePorts(t, "jaeger", func() error {
		j.writeConfig(t, allSignals)
		return j.launch(t)
	})
	return j
}

// writeConfig picks free ports and writes Jaeger's configuration.
func (j *jaegerServer) writeConfig(t *testing.T, allSignals bool) {
	t.Helper()
	j.otlp, j.grpc, j.query, j.prom, j.health = freePort(t), freePort(t), freePort(t), freePort(t), freePort(t)
	grpcQuery := freePort(t)
	pipelines := `
    metrics:
      receivers: [otlp]
      exporters: [prometheus]
    logs:
      receivers: [otlp]
      exporters: [debug]`
	if !allSignals {
		pipelines = ""
	}
	cfg := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]%s
  telemetry:
    metrics:
      level: none
extensions:
  jaeger_query:
    storage:
      traces: store
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      store:
        badger:
          directories:
            keys: %s
            values: %s
          ephemeral: false
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:%d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: store
  prometheus:
    endpoint: 127.0.0.1:%d
  debug:
    verbosity: detailed
`, pipelines, j.query, grpcQuery, filepath.Join(j.dir, "badger"), filepath.Join(j.dir, "badger"), j.health, j.otlp, j.grpc, j.prom)
	if err := os.WriteFile(j.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}

// start runs Jaeger (its own process group) and waits until it is healthy.
func (j *jaegerServer) start(t *testing.T) {
	t.Helper()
	if err := j.launch(t); err != nil {
		t.Fatal(err)
	}
}

// launch runs Jaeger and waits until it is healthy; an error when it
// exits first (its log says why).
func (j *jaegerServer) launch(t *testing.T) error {
	t.Helper()
	var err error
	j.proc, err = startBackend(t, "jaeger", []string{j.bin, "--config", j.config}, []string{"HOME=" + j.dir, "PATH=/usr/bin:/bin"},
		j.logPath, fmt.Sprintf("http://127.0.0.1:%d/status", j.health))
	return err
}

// kill ends Jaeger's process group with SIGKILL and reaps it; idempotent.
func (j *jaegerServer) kill() {
	if j.proc != nil {
		j.proc.kill()
		j.proc = nil
	}
}

func httpGet(t *testing.T, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	return http.DefaultClient.Do(req)
}

func (j *jaegerServer) endpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", j.otlp) }

// grpcEndpoint is its OTLP/gRPC receiver (http://: without TLS).
func (j *jaegerServer) grpcEndpoint() string { return fmt.Sprintf("http://127.0.0.1:%d", j.grpc) }

func (j *jaegerServer) get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := httpGet(t, url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s jaegerSpan) tag(k string) any {
	for _, t := range s.Tags {
		if t.Key == k {
			return t.Value
		}
	}
	return nil
}

// traces returns the traces Jaeger's query API holds for session id.
func (j *jaegerServer) traces(t *testing.T, id string) map[string][]jaegerSpan {
	t.Helper()
	tags, _ := json.Marshal(map[string]string{"lifeloop.session.id": id})
	b := j.get(t, fmt.Sprintf("http://127.0.0.1:%d/api/traces?service=lifeloop&limit=20&lookback=24h&tags=%s", j.query, tags))
	var res struct {
		Data []struct {
			TraceID string       `json:"traceID"`
			Spans   []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatalf("jaeger /api/traces: %v\n%s", err, b)
	}
	out := map[string][]jaegerSpan{}
	for _, d := range res.Data {
		out[d.TraceID] = d.Spans
	}
	return out
}

// traceOf waits until Jaeger's trace of session id holds want spans (the
// search finds the trace by any of its spans' tags, so it is fetched
// whole by id) and returns it.
func (j *jaegerServer) traceOf(t *testing.T, id string, want int) (string, []jaegerSpan) {
	t.Helper()
	deadline := time.Now().Add(runTimeout)
	for {
		var tid string
		var spans []jaegerSpan
		ts := j.traces(t, id)
		for k := range ts {
			tid = k
		}
		if len(ts) == 1 {
			var res struct {
				Data []struct {
					Spans []jaegerSpan `json:"spans"`
				} `json:"data"`
			}
			_ = json.Unmarshal(j.get(t, fmt.Sprintf("http://127.0.0.1:%d/api/traces/%s", j.query, tid)), &res)
			if len(res.Data) == 1 {
				spans = res.Data[0].Spans
			}
		}
		if len(ts) > 1 {
			t.Fatalf("session %s: %d traces in jaeger, want one", id, len(ts))
		}
		if len(spans) >= want || time.Now().After(deadline) {
			return tid, spans
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// expected maps session id's ledger as lifeloop-otlp does.
func expected(t *testing.T, state, id string) (otelmap.Output, []string) {
	t.Helper()
	m := otelmap.New(id)
	var out otelmap.Output
	var receipts []string
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(state, id), 0) {
		if err != nil {
			t.Fatal(err)
		}
		o := m.Map(e)
		out.Spans = append(out.Spans, o.Spans...)
		out.Logs = append(out.Logs, o.Logs...)
		out.Metrics = append(out.Metrics, o.Metrics...)
		receipts = append(receipts, e.Receipt.ReceiptID)
	}
	return out, receipts
}

// checkTrace holds Jaeger's trace of session id to the spans the ledger
// gives: the same trace id, every span once, with its name and parent.
func checkTrace(t *testing.T, j *jaegerServer, state, id string) []jaegerSpan {
	t.Helper()
	want, _ := expected(t, state, id)
	tid, got := j.traceOf(t, id, len(want.Spans))
	if wantTID := otelmap.New(id).TraceID().String(); tid != wantTID {
		t.Errorf("session %s: trace id %s, want %s (derived from the session id)", id, tid, wantTID)
	}
	byID := map[string]jaegerSpan{}
	for _, s := range got {
		if _, dup := byID[s.SpanID]; dup {
			t.Errorf("session %s: span %s (%s) stored twice", id, s.SpanID, s.OperationName)
		}
		byID[s.SpanID] = s
	}
	if len(got) != len(want.Spans) {
		names := func(n int, f func(int) string) []string {
			var s []string
			for i := range n {
				s = append(s, f(i))
			}
			slices.Sort(s)
			return s
		}
		t.Errorf("session %s: jaeger holds %d spans %v, the ledger gives %d %v", id, len(got),
			names(len(got), func(i int) string { return got[i].OperationName }), len(want.Spans),
			names(len(want.Spans), func(i int) string { return want.Spans[i].Name }))
	}
	for _, w := range want.Spans {
		g, ok := byID[w.ID.String()]
		if !ok {
			t.Errorf("session %s: span %s (%s) missing in jaeger", id, w.ID, w.Name)
			continue
		}
		if g.OperationName != w.Name {
			t.Errorf("span %s: name %q, want %q", w.ID, g.OperationName, w.Name)
		}
		var parent string
		var links []string
		for _, r := range g.References {
			if r.RefType == "CHILD_OF" {
				parent = r.SpanID
			} else {
				links = append(links, r.SpanID)
			}
		}
		if w.Parent.IsValid() && parent != w.Parent.String() {
			t.Errorf("span %s (%s): parent %s, want %s", w.ID, w.Name, parent, w.Parent)
		}
		for _, l := range w.Links {
			if !slices.Contains(links, l.SpanID.String()) {
				t.Errorf("span %s (%s): no link to %s in %v", w.ID, w.Name, l.SpanID, g.References)
			}
		}
	}
	return got
}

// checkLogsAndMetrics: every receipt of session id reached the backend
// as a log record (printed by its debug exporter: the log records sent
// over gRPC, or to a backend killed and started again, are checked
// there; checkStoredLogs checks them in a log store), and the session's
// metrics are on its Prometheus endpoint.
func checkLogsAndMetrics(t *testing.T, j *jaegerServer, state, id string) {
	t.Helper()
	_, receipts := expected(t, state, id)
	logs, err := os.ReadFile(j.logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range receipts {
		if !strings.Contains(string(logs), "lifeloop.receipt.id: Str("+r+")") {
			t.Errorf("session %s: receipt %s never reached the backend as a log record", id, r)
		}
	}
	checkMetrics(t, j, state, id)
}

// checkMetrics: the session's metrics are on the backend's Prometheus
// endpoint — the pressure gauge when the ledger observed pressure.
func checkMetrics(t *testing.T, j *jaegerServer, state, id string) {
	t.Helper()
	want, _ := expected(t, state, id)
	metrics := string(j.get(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", j.prom)))
	inst := `instance="` + id + `"`
	has := func(name string) bool {
		for _, line := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(line, name) && strings.Contains(line, inst) {
				return true
			}
		}
		return false
	}
	if !has("lifeloop_sessions_active") {
		t.Errorf("session %s: no lifeloop_sessions_active in the backend's metrics", id)
	}
	for _, m := range want.Metrics {
		if m.Name == otelmap.MetricUtilization && !has("lifeloop_context_utilization") {
			t.Errorf("session %s: the ledger observed pressure, the backend has no lifeloop_context_utilization", id)
			break
		}
	}
}

// TestOTelEveryHarnessIsOneTrace: a one-shot prompt of each of the five
// real harnesses under `lifeloop run --otlp` shows up in a real Jaeger as
// one trace (trace id derived from the session id) holding exactly the
// spans its ledger gives — session, invoke_agent incarnation, frames —
// with the session's metrics, and every receipt as a log record in a real
// log store (VictoriaLogs, through the standard
// OTEL_EXPORTER_OTLP_LOGS_ENDPOINT) correlated to a span of that trace,
// all sent before lifeloop exits (nothing owed).
func TestOTelEveryHarnessIsOneTrace(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	logs := startLogStore(t)
	// 120 000 of a 200 000 window: every harness observes pressure.
	mock := startMock(t, mockmodel.Config{Reply: "hello", Usage: mockmodel.Usage{InputTokens: 120000, OutputTokens: 50}})
	pressured := 0
	for _, h := range oneShots {
		t.Run(h.name, func(t *testing.T) {
			bin := h.bin(t)
			env := testharness.NewHarnessEnv(t, mock)
			env.UseNodeFor(t, bin)
			env.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", logs.logsEndpoint())
			state := stateDir(t)
			res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--otlp", j.endpoint(), "--", bin}, h.args...)...)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			if strings.Contains(res.Stderr, "OpenTelemetry") {
				t.Errorf("run with a healthy backend warned:\n%s", res.Stderr)
			}
			id, rs := onlySession(t, state)
			spans := checkTrace(t, j, state, id)
			inc := 0
			for _, s := range spans {
				if s.OperationName == "invoke_agent "+h.name {
					inc++
					if s.tag("gen_ai.agent.name") != h.name || s.tag("gen_ai.operation.name") != "invoke_agent" {
						t.Errorf("incarnation span tags %v", s.Tags)
					}
				}
			}
			if inc != 1 {
				t.Errorf("%d invoke_agent %s spans, want 1", inc, h.name)
			}
			if lastOf(rs, "frame.ended") != nil && !slices.ContainsFunc(spans, func(s jaegerSpan) bool { return s.OperationName == otelmap.SpanFrame }) {
				t.Error("the ledger has an ended frame, jaeger no lifeloop.frame span")
			}
			if lastOf(rs, "context.pressure_observed") == nil {
				t.Logf("%s observed no context pressure in this run: the pressure metric is not checked for it", h.name)
			} else {
				pressured++
			}
			checkMetrics(t, j, state, id)
			checkStoredLogs(t, logs, spans, state, id)
		})
	}
	if pressured == 0 {
		t.Error("no harness observed context pressure: the pressure metric was never checked")
	}
}

// TestOTelOverGRPC: with the standard OTEL_EXPORTER_OTLP_PROTOCOL=grpc,
// `lifeloop run --otlp` sends a one-shot prompt's session to the
// backend's OTLP/gRPC receiver: the same trace, logs and metrics as over
// HTTP, nothing owed.
func TestOTelOverGRPC(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	mock := startMock(t, mockmodel.Config{Reply: "hello", Usage: mockmodel.Usage{InputTokens: 120000, OutputTokens: 50}})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--otlp", j.grpcEndpoint(), "--", testharness.ClaudeBin(t), "-p", "hi")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if strings.Contains(res.Stderr, "OpenTelemetry") {
		t.Errorf("run with a healthy gRPC backend warned:\n%s", res.Stderr)
	}
	id, _ := onlySession(t, state)
	checkTrace(t, j, state, id)
	checkLogsAndMetrics(t, j, state, id)
}

// TestOTelBackendDownThenExport: a Claude Code TUI session under
// `lifeloop run --otlp` whose backend is killed after the first turn: the
// harness goes on (a renewal, another turn) as if nothing happened, run
// says on stderr what it owes, and after the backend is back `lifeloop
// export otlp` delivers the rest: the trace holds every span once —
// both incarnations, both frames, the renewal linked to both — and every
// receipt as a log record.
func TestOTelBackendDownThenExport(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	mock := startMock(t, mockmodel.Config{Reply: "Reply.", Usage: mockmodel.Usage{InputTokens: 60000, OutputTokens: 100}})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--otlp", j.endpoint(), "--", bin), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	ses, _ := onlySession(t, state)
	frames := func(n int) func([]map[string]any) bool {
		return func(rs []map[string]any) bool {
			c := 0
			for _, r := range rs {
				if r["event"] == "frame.ended" {
					c++
				}
			}
			return c >= n
		}
	}
	term.Type("first prompt 5c2e")
	if err := term.WaitFor("first prompt 5c2e", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	waitSessionLedger(t, state, ses, "the first turn's end", frames(1))
	// Each harness process is handed its own incarnation span as parent.
	handed := []string{traceparentOf(t, state, ses)}
	// The first frame's span reaches the backend while the session runs.
	if _, spans := j.traceOf(t, ses, 1); !slices.ContainsFunc(spans, func(s jaegerSpan) bool { return s.OperationName == otelmap.SpanFrame }) {
		t.Fatalf("the first frame did not reach jaeger while the session ran: %v", spans)
	}

	j.kill()
	before := len(term.Output())
	if res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--fresh", ses); res.ExitCode != 0 {
		t.Fatalf("renew with the backend down: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	testharness.ClaudeScreenReady(t, term, before)
	at := len(term.Output())
	term.Type("second prompt 8b4d")
	waitOutputAfter(t, term, at, "second prompt 8b4d", screenTimeout)
	term.Type("\r")
	waitSessionLedger(t, state, ses, "the second turn's end", frames(2))
	handed = append(handed, traceparentOf(t, state, ses))
	endSafeTUI(t, env, term)
	if out := term.Output(); !strings.Contains(out, "OpenTelemetry export of session "+ses+" owes") || !strings.Contains(out, "lifeloop export otlp "+ses) {
		t.Errorf("run did not say what it owes and how to send it:\n%s", out[max(0, len(out)-2000):])
	}

	j.start(t)
	res := env.Run(runTimeout, ll, "export", "otlp", "--state-dir", state, "--endpoint", j.endpoint(), ses)
	if res.ExitCode != 0 {
		t.Fatalf("export otlp: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	var rep struct {
		Owed uint64 `json:"owed"`
	}
	_ = json.Unmarshal([]byte(res.Stdout), &rep)
	if rep.Owed != 0 {
		t.Errorf("export otlp still owes: %s", res.Stdout)
	}
	spans := checkTrace(t, j, state, ses)
	count := map[string]int{}
	for _, s := range spans {
		count[s.OperationName]++
	}
	if count[otelmap.SpanSession] != 1 || count["invoke_agent claude"] != 2 || count[otelmap.SpanFrame] != 2 || count[otelmap.SpanRenewal] != 1 {
		t.Errorf("spans %v, want 1 session, 2 invoke_agent claude, 2 frames, 1 renewal", count)
	}
	for n, tp := range handed {
		if !slices.ContainsFunc(spans, func(s jaegerSpan) bool {
			return s.OperationName == "invoke_agent claude" && s.tag("lifeloop.incarnation") == float64(n+1) && tp == s.SpanID
		}) {
			t.Errorf("harness process %d was handed the parent span %s, not the id of incarnation %d in jaeger", n+1, tp, n+1)
		}
	}
	checkLogsAndMetrics(t, j, state, ses)
	// A second export sends nothing more.
	res = env.Run(runTimeout, ll, "export", "otlp", "--state-dir", state, "--endpoint", j.endpoint(), ses)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, `"owed":0`) {
		t.Errorf("second export: exit %d %s %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	checkTrace(t, j, state, ses)
}

// TestOTelOutcomes: a harness killed by a signal, and a wrapper killed
// with SIGKILL (its session sealed as lost by `export otlp`), show their
// outcome on the session span in the real backend.
func TestOTelOutcomes(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))

	t.Run("signal", func(t *testing.T) {
		state := stateDir(t)
		res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--otlp", j.endpoint(), "--", "sh", "-c", "kill -TERM $$")
		if res.ExitCode != 128+15 {
			t.Fatalf("exit %d, want 143\n%s", res.ExitCode, res.Stderr)
		}
		id, _ := onlySession(t, state)
		root := sessionSpan(t, checkTrace(t, j, state, id))
		if root.tag("lifeloop.session.outcome") != "cancelled" || root.tag("lifeloop.exit.signal") != float64(15) {
			t.Errorf("session span tags %v, want outcome cancelled, signal 15", root.Tags)
		}
	})

	t.Run("lost", func(t *testing.T) {
		state := stateDir(t)
		cmd := env.Command(ll, "run", "--state-dir", state, "--otlp", j.endpoint(), "--", "sh", "-c", "touch ready-lost; exec sleep 120")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := filepath.Join(env.Dir, "ready-lost")
		deadline := time.Now().Add(runTimeout)
		for {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the harness never started")
			}
			time.Sleep(50 * time.Millisecond)
		}
		id, _ := onlySession(t, state)
		rec, err := statedir.ReadSession(state, id)
		if err != nil {
			t.Fatal(err)
		}
		// The harness outlives its wrapper: end it with the test.
		t.Cleanup(func() { _ = syscall.Kill(-rec.Pid, syscall.SIGKILL) })
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		// The killed wrapper's exporter sees its stdin end and delivers
		// what it has (--drain) before it lets the outbox go; until then
		// export says so and exits 1.
		var res testharness.Result
		for deadline := time.Now().Add(runTimeout); ; time.Sleep(100 * time.Millisecond) {
			res = env.Run(runTimeout, ll, "export", "otlp", "--state-dir", state, "--endpoint", j.endpoint(), id)
			if !strings.Contains(res.Stdout+res.Stderr, "another lifeloop process is delivering it") || time.Now().After(deadline) {
				break
			}
		}
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, `"owed":0`) {
			t.Fatalf("export otlp: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
		}
		root := sessionSpan(t, checkTrace(t, j, state, id))
		if root.tag("lifeloop.session.outcome") != "lost" || root.tag("otel.status_code") != "ERROR" {
			t.Errorf("session span tags %v, want outcome lost, status ERROR", root.Tags)
		}
	})
}

// traceparentOf returns the parent span id in the TRACEPARENT of the
// harness process session ses runs now (the pid its session record
// names; a relaunch's session.started may come from a hook, which names
// no pid).
func traceparentOf(t *testing.T, state, ses string) string {
	t.Helper()
	pid, _ := sessionRecord(t, state, ses)["pid"].(float64)
	if pid <= 0 {
		t.Fatalf("the session record of %s names no harness process", ses)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", int(pid)))
	if err != nil {
		t.Fatal(err)
	}
	for kv := range strings.SplitSeq(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, "TRACEPARENT="); ok {
			if parts := strings.Split(v, "-"); len(parts) == 4 {
				return parts[2]
			}
		}
	}
	t.Fatalf("harness process %d has no TRACEPARENT", int(pid))
	return ""
}

func sessionSpan(t *testing.T, spans []jaegerSpan) jaegerSpan {
	t.Helper()
	for _, s := range spans {
		if s.OperationName == otelmap.SpanSession {
			return s
		}
	}
	t.Fatalf("no %s span in %v", otelmap.SpanSession, spans)
	return jaegerSpan{}
}

// TestOTelTracesOnlyBackend: Jaeger in its default shape takes traces
// and answers 404 to logs and metrics. The trace arrives whole, run owes
// nothing (a signal the backend does not take is dropped, not retried
// forever), and export otlp reports what was refused.
func TestOTelTracesOnlyBackend(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaegerWith(t, false)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--otlp", j.endpoint(), "--", "sh", "-c", "echo hi")
	if res.ExitCode != 0 || strings.Contains(res.Stderr, "OpenTelemetry") {
		t.Fatalf("exit %d\n%s", res.ExitCode, res.Stderr)
	}
	id, _ := onlySession(t, state)
	checkTrace(t, j, state, id)
	// The cursor says everything was handled: a new export has nothing
	// to send and refuses nothing more; the session's log says what the
	// backend refused.
	res = env.Run(runTimeout, ll, "export", "otlp", "--state-dir", state, "--endpoint", j.endpoint(), id)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, `"owed":0`) {
		t.Fatalf("export otlp: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	log, err := os.ReadFile(statedir.LogPath(state, id))
	if err != nil {
		t.Fatal(err)
	}
	for _, signal := range []string{"logs", "metrics"} {
		if !strings.Contains(string(log), `"signal":"`+signal+`"`) || !strings.Contains(string(log), "404 Not Found") {
			t.Errorf("the session log does not say the backend refused %s:\n%s", signal, log)
		}
	}
}

// TestOTelFollowNewSessionsAndWatch: `lifeloop export otlp --all
// --follow`, started on an empty state folder, exports a session that
// starts after it (a `claude -p` run without --otlp) whole; and
// `lifeloop watch --otlp` over that Claude session's transcript sends
// the watch session's trace, logs and metrics before it exits.
func TestOTelFollowNewSessionsAndWatch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	mock := startMock(t, mockmodel.Config{Reply: "hello", Usage: mockmodel.Usage{InputTokens: 120000, OutputTokens: 50}})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	var exportOut, exportErr strings.Builder
	export := env.Command(ll, "export", "otlp", "--state-dir", state, "--all", "--follow", "--endpoint", j.endpoint())
	export.Stdout, export.Stderr = &exportOut, &exportErr
	if err := export.Start(); err != nil {
		t.Fatal(err)
	}
	exited := false
	t.Cleanup(func() {
		if !exited {
			_ = export.Process.Kill()
			_ = export.Wait()
		}
	})
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", testharness.ClaudeBin(t), "-p", "hi")
	if res.ExitCode != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	id, _ := onlySession(t, state)
	checkTrace(t, j, state, id)
	checkLogsAndMetrics(t, j, state, id)
	_ = export.Process.Signal(syscall.SIGINT)
	err := export.Wait()
	exited = true
	if err != nil {
		t.Errorf("export otlp --all --follow interrupted: %v\nstdout: %s\nstderr: %s", err, exportOut.String(), exportErr.String())
	}
	if !strings.Contains(exportOut.String(), `"session_id":"`+id+`"`) || !strings.Contains(exportOut.String(), `"owed":0}`) {
		t.Errorf("export report names no session %s with nothing owed:\n%s", id, exportOut.String())
	}

	watchState := stateDir(t)
	w := env.Run(runTimeout, ll, "watch", "--state-dir", watchState, "--adapter", "claude", "--cwd", env.Dir, "--until-idle", "2s", "--otlp", j.endpoint())
	if w.ExitCode != 0 {
		t.Fatalf("watch --otlp: exit %d\n%s\n%s", w.ExitCode, w.Stdout, w.Stderr)
	}
	if strings.Contains(w.Stderr, "OpenTelemetry") {
		t.Errorf("watch with a healthy backend warned:\n%s", w.Stderr)
	}
	wid, _ := onlySession(t, watchState)
	checkTrace(t, j, watchState, wid)
	checkLogsAndMetrics(t, j, watchState, wid)
}

// TestOTelTracesAsJSON: with the standard
// OTEL_EXPORTER_OTLP_PROTOCOL=http/json the traces go to the backend's
// OTLP/HTTP receiver as JSON (seen on the way, through a proxy that
// notes each request's content type), the backend takes them and the
// trace is queryable whole.
func TestOTelTracesAsJSON(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	target, err := url.Parse(j.endpoint())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	types := map[string][]string{} // path -> content types
	proxy := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		types[r.URL.Path] = append(types[r.URL.Path], r.Header.Get("Content-Type"))
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()

	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	env.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--otlp", srv.URL, "--", "sh", "-c", "echo hi")
	if res.ExitCode != 0 || strings.Contains(res.Stderr, "OpenTelemetry") {
		t.Fatalf("exit %d\n%s", res.ExitCode, res.Stderr)
	}
	id, _ := onlySession(t, state)
	checkTrace(t, j, state, id)
	mu.Lock()
	defer mu.Unlock()
	if got := types["/v1/traces"]; len(got) == 0 || slices.ContainsFunc(got, func(ct string) bool { return ct != "application/json" }) {
		t.Errorf("traces sent with content types %q, want application/json only", got)
	}
}
