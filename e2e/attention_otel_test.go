package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestOTelAttentionInTheBackend: a session's attention as the wrapper
// records it (internal/otelmap's built stream: a permission dialog of
// 7.5 s, a finished turn waiting 60 s, a rate-limit error still open at
// the end, 17.8 s; its times moved to now), exported by `lifeloop export
// otlp` into a real Jaeger: the incarnation span holds one
// lifeloop.attention.episode event per episode, at its start, with its
// kind and duration; the frames their turn's waiting; the backend's
// Prometheus endpoint the waiting time histogram per kind (one episode
// each, the same seconds) and lifeloop.sessions.waiting back to 0.
func TestOTelAttentionInTheBackend(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	j := startJaeger(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	state := stateDir(t)
	id := "ses_" + ulid.Make().String()
	src := filepath.Join(testharness.ModuleRoot(t), "internal", "otelmap", "testdata", "claude-attention.receipts.jsonl")
	start := time.Now().Add(-2 * time.Minute)
	end := start.Add(90 * time.Second)
	if err := statedir.WriteSession(state, statedir.SessionRecord{ID: id, State: statedir.StateAborted, AdapterID: "claude",
		IntegrationMode: "launcher_wrapper", Argv: []string{"claude"}, StartedAt: &start, EndedAt: &end, UpdatedAt: end}); err != nil {
		t.Fatal(err)
	}
	moveLedger(t, src, statedir.ReceiptsPath(state, id), start)

	res := env.Run(runTimeout, ll, "export", "otlp", "--state-dir", state, "--endpoint", j.endpoint(), id)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, `"owed":0`) {
		t.Fatalf("export otlp: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	checkTrace(t, j, state, id)
	want, _ := expected(t, state, id)
	got := jaegerEvents(t, j, id)

	type ev struct {
		span, kind string
		atUs, ms   int64
	}
	var wantEvs []ev
	for _, s := range want.Spans {
		for _, e := range s.Events {
			if e.Name != otelmap.EventAttentionEpisode {
				continue
			}
			var kind string
			var ms int64
			for _, kv := range e.Attrs {
				switch kv.Key {
				case otelmap.AttrAttentionKind:
					kind = kv.Value.AsString()
				case otelmap.AttrAttentionDuration:
					ms = kv.Value.AsInt64()
				}
			}
			wantEvs = append(wantEvs, ev{s.ID.String(), kind, e.Time.UnixMicro(), ms})
		}
	}
	if len(wantEvs) != 3 {
		t.Fatalf("the mapping gives %d episode events, want 3", len(wantEvs))
	}
	var gotEvs []ev
	for _, e := range got.events {
		if e.name == otelmap.EventAttentionEpisode {
			ms, _ := strconv.ParseInt(e.fields[string(otelmap.AttrAttentionDuration)], 10, 64)
			gotEvs = append(gotEvs, ev{e.span, e.fields[string(otelmap.AttrAttentionKind)], e.atUs, ms})
		}
	}
	t.Logf("episode events in jaeger: %+v", gotEvs)
	if fmt.Sprint(gotEvs) != fmt.Sprint(wantEvs) {
		t.Errorf("episode events in jaeger %+v, want %+v", gotEvs, wantEvs)
	}
	for _, w := range []string{otelmap.AttrWaitedPrefix + "needs_permission=7500", otelmap.AttrWaitedPrefix + "stopped_on_error=100"} {
		if !got.frameTags[w] {
			t.Errorf("no frame span in jaeger has %s (frame tags %v)", w, got.frameTags)
		}
	}

	metrics := string(j.get(t, fmt.Sprintf("http://127.0.0.1:%d/metrics", j.prom)))
	value := func(name, kind string) (float64, bool) {
		for _, line := range strings.Split(metrics, "\n") {
			if strings.HasPrefix(line, name+"{") && strings.Contains(line, `instance="`+id+`"`) && strings.Contains(line, `lifeloop_attention_kind="`+kind+`"`) {
				v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
				return v, err == nil
			}
		}
		return 0, false
	}
	for kind, sec := range map[string]float64{"needs_permission": 7.5, "waiting_for_input": 60, "stopped_on_error": 17.8} {
		if n, ok := value("lifeloop_attention_wait_duration_seconds_count", kind); !ok || n != 1 {
			t.Errorf("%s: wait duration count %v (found %v), want 1", kind, n, ok)
		}
		s, ok := value("lifeloop_attention_wait_duration_seconds_sum", kind)
		t.Logf("%s: lifeloop_attention_wait_duration_seconds_sum %v", kind, s)
		if !ok || s != sec {
			t.Errorf("%s: wait duration sum %v (found %v), want %v", kind, s, ok, sec)
		}
	}
	for _, kind := range []string{"needs_permission", "needs_answer", "waiting_for_input", "stopped_on_error"} {
		if n, ok := value("lifeloop_sessions_waiting", kind); !ok || n != 0 {
			t.Errorf("%s: lifeloop_sessions_waiting %v (found %v), want 0 after the session's end", kind, n, ok)
		}
	}
}

// TestAttentionSameEpisodesEverywhere: the built attention stream's
// episodes, through `lifeloop receipts --format orgloop` and `--format
// hcp`, are those OTel shows: OrgLoop one active event per episode (the
// state as reason, keyed by episode) and the stop with the episode the
// end closed (17 800 ms); HCP a progress per change whose closed episodes
// have the durations of the OTel events (7500 and 60000 ms), the end's
// state_changed the last one, and one warning each for the dialog and
// the error.
func TestAttentionSameEpisodesEverywhere(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	state := stateDir(t)
	id := "ses_" + ulid.Make().String()
	start := time.Now().Add(-2 * time.Minute)
	end := start.Add(90 * time.Second)
	if err := statedir.WriteSession(state, statedir.SessionRecord{ID: id, State: statedir.StateAborted, AdapterID: "claude",
		IntegrationMode: "launcher_wrapper", Argv: []string{"claude"}, StartedAt: &start, EndedAt: &end, UpdatedAt: end}); err != nil {
		t.Fatal(err)
	}
	moveLedger(t, filepath.Join(testharness.ModuleRoot(t), "internal", "otelmap", "testdata", "claude-attention.receipts.jsonl"), statedir.ReceiptsPath(state, id), start)

	org := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--format", "orgloop", id)
	if org.ExitCode != 0 {
		t.Fatalf("receipts --format orgloop: exit %d: %s", org.ExitCode, org.Stderr)
	}
	var reasons, keys []string
	var endClosed []float64
	for _, line := range strings.Split(strings.TrimSpace(org.Stdout), "\n") {
		var ev struct {
			Payload struct {
				Lifecycle struct {
					Phase     string `json:"phase"`
					Reason    string `json:"reason"`
					DedupeKey string `json:"dedupe_key"`
				} `json:"lifecycle"`
				Attention map[string]any `json:"attention"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if ev.Payload.Lifecycle.Phase != "active" {
			if c, _ := ev.Payload.Attention["closed"].(map[string]any); c != nil {
				ms, _ := c["duration_ms"].(float64)
				endClosed = append(endClosed, ms)
			}
			continue
		}
		if ev.Payload.Attention != nil {
			reasons = append(reasons, ev.Payload.Lifecycle.Reason)
			keys = append(keys, ev.Payload.Lifecycle.DedupeKey[strings.LastIndexByte(ev.Payload.Lifecycle.DedupeKey, ':')+1:])
		}
	}
	if fmt.Sprint(reasons) != "[needs_permission waiting_for_input stopped_on_error]" || fmt.Sprint(keys) != "[attention.1 attention.2 attention.3]" {
		t.Errorf("orgloop attention events: reasons %v keys %v", reasons, keys)
	}
	if fmt.Sprint(endClosed) != "[17800]" {
		t.Errorf("orgloop: the stop's attention closed %v ms, want [17800]", endClosed)
	}

	h := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--format", "hcp", id)
	if h.ExitCode != 0 {
		t.Fatalf("receipts --format hcp: exit %d: %s", h.ExitCode, h.Stderr)
	}
	var closed []float64
	var warnings []string
	for _, line := range strings.Split(strings.TrimSpace(h.Stdout), "\n") {
		var e struct {
			Payload struct {
				EventType string         `json:"event_type"`
				Data      map[string]any `json:"data"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		d := e.Payload.Data
		switch {
		case e.Payload.EventType == "progress" && d["stage"] == "attention_changed":
			meta, _ := d["metadata"].(map[string]any)
			att, _ := meta["attention"].(map[string]any)
			if c, ok := att["closed"].(map[string]any); ok {
				ms, _ := c["duration_ms"].(float64)
				closed = append(closed, ms)
			}
		case e.Payload.EventType == "state_changed" && (d["to_state"] == "ABORTED" || d["to_state"] == "FAILED" || d["to_state"] == "COMPLETED"):
			meta, _ := d["metadata"].(map[string]any)
			att, _ := meta["attention"].(map[string]any)
			if c, ok := att["closed"].(map[string]any); ok {
				ms, _ := c["duration_ms"].(float64)
				closed = append(closed, ms)
			}
		case e.Payload.EventType == "warning":
			warnings = append(warnings, fmt.Sprint(d["code"]))
		}
	}
	if fmt.Sprint(closed) != "[7500 60000 17800]" || fmt.Sprint(warnings) != "[attention_needs_permission attention_stopped_on_error]" {
		t.Errorf("hcp: closed episodes %v ms, warnings %v", closed, warnings)
	}
}

type jaegerEvent struct {
	span, name string
	atUs       int64
	fields     map[string]string
}

type jaegerAttention struct {
	events    []jaegerEvent
	frameTags map[string]bool // "key=value" of the frame spans' lifeloop.attention.* tags
}

// jaegerEvents reads the span events (Jaeger's logs) and the frames'
// attention tags of session id's trace.
func jaegerEvents(t *testing.T, j *jaegerServer, id string) jaegerAttention {
	t.Helper()
	var tid string
	for k := range j.traces(t, id) {
		tid = k
	}
	var res struct {
		Data []struct {
			Spans []struct {
				SpanID        string `json:"spanID"`
				OperationName string `json:"operationName"`
				Tags          []struct {
					Key   string `json:"key"`
					Value any    `json:"value"`
				} `json:"tags"`
				Logs []struct {
					Timestamp int64 `json:"timestamp"`
					Fields    []struct {
						Key   string `json:"key"`
						Value any    `json:"value"`
					} `json:"fields"`
				} `json:"logs"`
			} `json:"spans"`
		} `json:"data"`
	}
	body := j.get(t, fmt.Sprintf("http://127.0.0.1:%d/api/traces/%s", j.query, tid))
	if err := json.Unmarshal(body, &res); err != nil || len(res.Data) != 1 {
		t.Fatalf("jaeger trace %s: %v\n%s", tid, err, body)
	}
	out := jaegerAttention{frameTags: map[string]bool{}}
	for _, s := range res.Data[0].Spans {
		for _, l := range s.Logs {
			e := jaegerEvent{span: s.SpanID, atUs: l.Timestamp, fields: map[string]string{}}
			for _, f := range l.Fields {
				if f.Key == "event" {
					e.name = fmt.Sprint(f.Value)
				}
				e.fields[f.Key] = fmt.Sprint(f.Value)
			}
			out.events = append(out.events, e)
		}
		if s.OperationName == otelmap.SpanFrame {
			for _, tag := range s.Tags {
				if strings.HasPrefix(tag.Key, "lifeloop.attention.") {
					out.frameTags[tag.Key+"="+fmt.Sprint(tag.Value)] = true
				}
			}
		}
	}
	return out
}

// moveLedger writes the ledger src to dst with its times moved so that
// its first receipt is at start (by whole seconds, so each receipt keeps
// its millisecond): at_epoch_s, the time of each ULID receipt and event
// id, and every *_epoch_ms of its summaries.
func moveLedger(t *testing.T, src, dst string, start time.Time) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var deltaS int64
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for first := true; sc.Scan(); first = false {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		at, _ := r["at_epoch_s"].(json.Number).Int64()
		if first {
			deltaS = start.Unix() - at
		}
		r["at_epoch_s"] = at + deltaS
		for _, k := range []string{"receipt_id", "event_id", "parent_receipt_id"} {
			s, ok := r[k].(string)
			if !ok {
				continue
			}
			prefix, rest, _ := strings.Cut(s, "_")
			u := ulid.MustParseStrict(rest)
			if err := u.SetTime(uint64(int64(u.Time()) + deltaS*1000)); err != nil {
				t.Fatal(err)
			}
			r[k] = prefix + "_" + u.String()
		}
		moveEpochMs(r, deltaS*1000)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func moveEpochMs(v any, deltaMs int64) {
	switch m := v.(type) {
	case map[string]any:
		for k, x := range m {
			if n, ok := x.(json.Number); ok && strings.HasSuffix(k, "_epoch_ms") {
				ms, _ := n.Int64()
				m[k] = ms + deltaMs
				continue
			}
			moveEpochMs(x, deltaMs)
		}
	case []any:
		for _, x := range m {
			moveEpochMs(x, deltaMs)
		}
	}
}
