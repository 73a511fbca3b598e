package codex

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// diffLines feeds lines to the parser and to the reference (the parser as
// it was before its fast path, oldparser_test.go) and fails on the first
// line where their observations or errors differ.
func diffLines(t testing.TB, lines [][]byte) {
	t.Helper()
	p, ref := NewParser(), newOldParser()
	var got, want []telemetry.Observation
	for i, l := range lines {
		src := telemetry.Provenance{Path: "r.jsonl", Line: int64(i + 1), Offset: int64(i) * 100, Kind: SourceRollout}
		var gerr, werr error
		got, gerr = p.Parse(got[:0], l, src)
		want, werr = ref.Parse(want[:0], l, src)
		if (gerr == nil) != (werr == nil) || errors.Is(gerr, telemetry.ErrNotObject) != errors.Is(werr, telemetry.ErrNotObject) {
			t.Fatalf("line %d %.300q: error %v, reference %v", i+1, l, gerr, werr)
		}
		if !reflect.DeepEqual(got, want) && (len(got) > 0 || len(want) > 0) {
			t.Fatalf("line %d %.300q:\n got %+v\nwant %+v", i+1, l, got, want)
		}
	}
}

func realSamples(t testing.TB) [][][]byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(paths) == 0 {
		t.Fatal("no samples in testdata")
	}
	// One set per file.
	var sets [][][]byte
	for _, p := range paths {
		b, _ := os.ReadFile(p)
		var set [][]byte
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(l) > 0 {
				set = append(set, l)
			}
		}
		sets = append(sets, set)
	}
	return sets
}

// genLines writes a rollout of n turns in the shapes Codex writes.
func genLines(n int, rng *rand.Rand) [][]byte {
	var out []string
	add := func(s string) { out = append(out, s) }
	ts := func(i int) string { return fmt.Sprintf("2026-11-21T22:%02d:%02d.%03dZ", i/60%60, i%60, i%1000) }
	ev := func(i int, typ, body string) {
		add(`{"timestamp":"` + ts(i) + `","ordinal":` + fmt.Sprint(i) + `,"type":"event_msg","payload":{"type":"` + typ + `"` + body + `}}`)
	}
	add(`{"timestamp":"` + ts(0) + `","type":"session_meta","payload":{"session_id":"th","id":"th-1","cwd":"/home/dev/p\u00e9","base_instructions":{"text":"You are \"x\"\n"}}}`)
	last, cum := 0, 0
	for i := range n {
		turn := fmt.Sprintf("t%d", i)
		ev(i, "task_started", `,"turn_id":"`+turn+`","model_context_window":`+fmt.Sprint(100000+rng.IntN(3)*1000))
		add(`{"timestamp":"` + ts(i) + `","type":"turn_context","payload":{"turn_id":"` + turn + `","model":"m` + fmt.Sprint(rng.IntN(2)) + `","sandbox_policy":{"mode":"x"}}}`)
		ev(i, "user_message", `,"message":"do \"it\"","images":[]`)
		for k := range 1 + rng.IntN(3) {
			add(`{"timestamp":"` + ts(i) + `","type":"response_item","payload":{"type":"function_call","id":"fc","name":"exec","arguments":"{\"cmd\":\"ls\"}","call_id":"c` + fmt.Sprint(k) + `"}}`)
			resp := fmt.Sprintf("resp_%d_%d", i, k)
			add(`{"timestamp":"` + ts(i) + `","type":"token_usage_record","payload":{"thread_id":"th","turn_id":"` + turn + `","response_id":"` + resp + `","usage":{"total_tokens":1}}}`)
			last = 1000 + rng.IntN(5000)
			cum += last
			tok := fmt.Sprintf(`,"info":{"total_token_usage":{"input_tokens":1,"total_tokens":%d},"last_token_usage":{"input_tokens":1,"total_tokens":%d},"model_context_window":%d},"rate_limits":null`, cum, last, 100000)
			ev(i, "token_count", tok)
			if rng.IntN(3) == 0 {
				ev(i, "token_count", tok) // repeated verbatim
			}
			if rng.IntN(6) == 0 {
				add(`{"timestamp":"` + ts(i) + `","type":"compacted","payload":{"message":"summary","replacement_history":[{"type":"message"}],"compaction_response_id":"` + resp + `"}}`)
			}
		}
		ev(i, "token_count", `,"info":null,"rate_limits":{"primary":null}`)
		switch rng.IntN(6) {
		case 0:
			ev(i, "turn_aborted", `,"turn_id":"`+turn+`","reason":"interrupted"`)
		case 1:
			add("{\"torn")
		default:
			ev(i, "task_complete", `,"turn_id":"`+turn+`","last_agent_message":"done"`)
		}
	}
	res := make([][]byte, len(out))
	for i, s := range out {
		res[i] = []byte(s)
	}
	return res
}

// mutation is how this harness's lines are mutated for the differential
// tests (telemetrytest.MutateLine).
var mutation = telemetrytest.Mutation{
	Keys:   []string{"timestamp", "type", "payload", "id", "cwd", "model", "turn_id", "response_id", "model_context_window", "compaction_response_id", "info", "total_token_usage", "last_token_usage", "total_tokens"},
	Values: []string{`null`, `1`, `1.5`, `-0`, `1e3`, `"x"`, `true`, `[]`, `{}`, `"\ud800"`, "\"\xff\"", `12345678901234567890`, `{"total_tokens":"1"}`, `"task_started"`},
	Own:    func(s string) string { return strings.Replace(s, `"payload":{`, `"payload":"{`, 1) },
}

func mutate(l []byte, rng *rand.Rand) []byte { return telemetrytest.MutateLine(l, rng, mutation) }

// TestParserMatchesReference runs the parser and the reference over the
// real samples, generated rollouts and mutated copies of both.
func TestParserMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	sets := realSamples(t)
	for range 8 {
		sets = append(sets, genLines(30, rng))
	}
	for si, set := range sets {
		t.Run(fmt.Sprint("set", si), func(t *testing.T) {
			diffLines(t, set)
			for round := range 30 {
				m := make([][]byte, len(set))
				for i, l := range set {
					m[i] = l
					if rng.IntN(3) == 0 {
						m[i] = mutate(l, rng)
					}
					if round%2 == 1 && rng.IntN(4) == 0 {
						m[i] = mutate(m[i], rng)
					}
				}
				diffLines(t, m)
			}
		})
	}
}

// FuzzParserMatchesReference: any line, read within a turn and again
// after it, gives the same observations and errors from the parser and
// the reference.
func FuzzParserMatchesReference(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, set := range append(realSamples(f), genLines(3, rng)) {
		for _, l := range set {
			f.Add(l)
		}
	}
	ctx := genLines(2, rand.New(rand.NewPCG(5, 6)))
	f.Fuzz(func(t *testing.T, l []byte) {
		lines := append(append([][]byte(nil), ctx[:len(ctx)-3]...), l, ctx[len(ctx)-3], l, ctx[len(ctx)-1], l)
		diffLines(t, lines)
	})
}

// TestWatchMatchesReference follows whole files with telemetry.Watch, once
// with the parser and once with the reference: the observations it
// delivers (pressure and evidence of unusable lines included) are equal.
func TestWatchMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	sets := append(realSamples(t), genLines(40, rng))
	m := make([][]byte, 0, len(sets[len(sets)-1]))
	for _, l := range sets[len(sets)-1] {
		if rng.IntN(3) == 0 {
			l = mutate(l, rng)
		}
		m = append(m, l)
	}
	sets = append(sets, m)
	for i, set := range sets {
		t.Run(fmt.Sprint("set", i), func(t *testing.T) {
			var b bytes.Buffer
			for _, l := range set {
				b.Write(l)
				b.WriteByte('\n')
			}
			last := int64(b.Len())
			b.WriteString(`{"timestamp":"2026-11-21T23:00:00.000Z","type":"session_meta","payload":{"id":"the-end","cwd":"/p"}}` + "\n")
			path := filepath.Join(t.TempDir(), "r.jsonl")
			telemetrytest.WriteFile(t, path, b.String())
			run := func(np func() telemetry.Parser) []telemetry.Observation {
				r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Path: path, NewParser: np, Tail: telemetry.TailConfig{FromStart: true, Poll: 5 * time.Millisecond, ForcePoll: true}})
				r.Until("last line", func(o telemetry.Observation) bool {
					return o.Kind == telemetry.ObsHarnessSession && o.Source.Offset == last
				})
				return r.Got
			}
			got := run(func() telemetry.Parser { return NewParser() })
			want := run(func() telemetry.Parser { return newOldParser() })
			var pressure, invalid int64
			for _, o := range want {
				if o.Kind == telemetry.ObsPressure {
					pressure++
				}
				invalid += o.Evidence.InvalidLines
			}
			t.Logf("%d observations, %d pressure changes, %d unusable lines", len(want), pressure, invalid)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %d observations, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
			}
		})
	}
}
