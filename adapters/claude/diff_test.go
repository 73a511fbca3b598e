package claude

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
func diffLines(t testing.TB, cfg windowConfig, lines [][]byte) {
	t.Helper()
	p, ref := newParser(cfg), newOldParser(cfg)
	var got, want []telemetry.Observation
	for i, l := range lines {
		src := telemetry.Provenance{Path: "t.jsonl", Line: int64(i + 1), Offset: int64(i) * 100}
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

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func realSamples(t testing.TB) [][][]byte {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if len(paths) == 0 {
		t.Fatal("no samples in testdata")
	}
	var out [][][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, splitLines(b))
	}
	return out
}

const dsid = "50b5cee6-b206-49d4-b2a9-c196226154be"

// genLines writes a transcript of n turns in the shapes Claude Code
// writes: prompts (string and block content), tool turns, sidechains,
// repeated usage, local commands, synthetic and API-error answers,
// compactions, other line types, a session change, torn lines.
func genLines(n int, rng *rand.Rand) [][]byte {
	var out []string
	sid := dsid
	add := func(s string) { out = append(out, s) }
	ts := func(i int) string { return fmt.Sprintf("2026-11-21T22:%02d:%02d.%03dZ", i/60%60, i%60, i%1000) }
	user := func(i int, uuid, prompt, content, extra string) {
		add(`{"parentUuid":null,"isSidechain":false,"promptId":"` + prompt + `","type":"user","message":{"role":"user","content":` + content + `},"uuid":"` + uuid + `","timestamp":"` + ts(i) + `","cwd":"/p","sessionId":"` + sid + `"` + extra + `}`)
	}
	asst := func(i int, msg, req, model, stop string, in, cc, cr, out int, extra string) {
		st := `null`
		if stop != "" {
			st = `"` + stop + `"`
		}
		add(`{"parentUuid":"x","isSidechain":false,"message":{"id":"` + msg + `","type":"message","role":"assistant","model":"` + model + `","content":[{"type":"text","text":"hi \"there\" \u00e9"}],"stop_reason":` + st + `,"usage":{"input_tokens":` + fmt.Sprint(in) + `,"cache_creation_input_tokens":` + fmt.Sprint(cc) + `,"cache_read_input_tokens":` + fmt.Sprint(cr) + `,"output_tokens":` + fmt.Sprint(out) + `,"server_tool_use":{"web_search_requests":0},"service_tier":"standard"}},"requestId":"` + req + `","type":"assistant","uuid":"a-` + msg + `","timestamp":"` + ts(i) + `","sessionId":"` + sid + `"` + extra + `}`)
	}
	models := []string{"claude-opus-4-8", "claude-sonnet-4-5-20250929", "claude-haiku-4-5[1m]"}
	for i := range n {
		p := fmt.Sprintf("p%d", i)
		m := models[rng.IntN(len(models))]
		switch rng.IntN(13) {
		case 0:
			add(`{"type":"queue-operation","operation":"enqueue","timestamp":"` + ts(i) + `","sessionId":"` + sid + `","content":"RUN"}`)
		case 1:
			user(i, "c"+p, p, `"<local-command-caveat>Caveat</local-command-caveat>"`, `,"isMeta":false`)
			user(i, "d"+p, p, `"<command-name>/exit</command-name>\n<command-message>exit</command-message>"`, "")
			asst(i, "s"+p, "", "<synthetic>", "stop_sequence", 0, 0, 0, 0, "")
		case 2:
			add(`{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":` + fmt.Sprint(1000*i) + `,"postTokens":700},"timestamp":"` + ts(i) + `","sessionId":"` + sid + `"}`)
			user(i, "s"+p, p, `"This session is being continued. Summary:\n\ttext"`, `,"isCompactSummary":true,"isVisibleInTranscriptOnly":true`)
		case 3:
			asst(i, "e"+p, "", "<synthetic>", "stop_sequence", 0, 0, 0, 0, `,"isApiErrorMessage":true,"error":"rate_limit"`)
		case 4:
			sid = fmt.Sprintf("%s-%d", dsid[:30], i)
		case 5:
			add("\x01\x02 torn {")
		case 6:
			add(`{"parentUuid":"x","isSidechain":true,"agentId":"ag` + p + `","promptId":"` + p + `","type":"user","message":{"role":"user","content":[{"type":"text","text":"sub"}]},"uuid":"sc` + p + `","timestamp":"` + ts(i) + `","sessionId":"` + sid + `"}`)
			asst(i, "sm"+p, "sr", m, "end_turn", 1, 2, 3, 4, `,"isSidechain":true`)
		}
		content := fmt.Sprintf("%q", "prompt "+p+" \u00e9 \\ \"q\"")
		if rng.IntN(3) == 0 {
			content = `[{"type":"text","text":` + content + `},{"type":"image","source":{"data":"AAAA"}}]`
		}
		early := rng.IntN(8) == 0
		if early {
			asst(i+1, "m"+p+"x", "r", m, "end_turn", 5, 0, 0, 1, "")
		}
		user(i, "u"+p, p, content, `,"permissionMode":"default"`)
		msg, req := "m"+p+"a", "r"+p
		asst(i, msg, req, m, "", 10*i, 100, 1000*i, 5, "")
		asst(i, msg, req, m, "tool_use", 10*i, 100, 1000*i, 5, "")
		user(i, "t"+p, p, `[{"tool_use_id":"toolu_1","type":"tool_result","content":"ok\nline","is_error":false}]`, `,"toolUseResult":{"stdout":"ok","stderr":""}`)
		asst(i, "m"+p+"b", "r", m, "end_turn", 10*i, 100, 1000*i+500, 5, "")
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
	Keys:   []string{"type", "subtype", "sessionId", "uuid", "promptId", "agentId", "timestamp", "requestId", "isSidechain", "isMeta", "isCompactSummary", "isVisibleInTranscriptOnly", "isApiErrorMessage", "error", "message", "compactMetadata", "id", "role", "model", "stop_reason", "content", "usage", "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens", "trigger", "preTokens", "postTokens"},
	Values: []string{`null`, `1`, `1.5`, `-0`, `1e3`, `"x"`, `true`, `[]`, `{}`, `"t\u0079pe"`, `"\ud800"`, "\"\xff\"", `12345678901234567890`, `[{"type":"tool_result"},null]`, `[{"Type":"text"}]`, `["x"]`},
	Own:    func(s string) string { return strings.Replace(s, `"content":"`, `"content":"\u003ccommand-name>`, 1) },
}

func mutate(l []byte, rng *rand.Rand) []byte { return telemetrytest.MutateLine(l, rng, mutation) }

// TestParserMatchesReference runs the parser and the reference over the
// real samples, generated transcripts and mutated copies of both, under
// each window configuration.
func TestParserMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var sets [][][]byte
	sets = append(sets, realSamples(t)...)
	for range 8 {
		sets = append(sets, genLines(60, rng))
	}
	for _, cfg := range []windowConfig{{}, {AutoCompactWindow: 60000}, {MaxContextTokens: 300000}} {
		for si, set := range sets {
			t.Run(fmt.Sprintf("set%d/%+v", si, cfg), func(t *testing.T) {
				diffLines(t, cfg, set)
				for round := range 20 {
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
					diffLines(t, cfg, m)
				}
			})
		}
	}
}

// FuzzParserMatchesReference: any line, read after an open turn and
// again after it, gives the same observations and errors from the parser
// and the reference.
func FuzzParserMatchesReference(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, set := range append(realSamples(f), genLines(6, rng)) {
		for _, l := range set {
			f.Add(l)
		}
	}
	ctx := genLines(3, rand.New(rand.NewPCG(5, 6)))
	f.Fuzz(func(t *testing.T, l []byte) {
		lines := append(append([][]byte(nil), ctx[:len(ctx)-2]...), l, ctx[len(ctx)-2], l, l)
		diffLines(t, windowConfig{}, lines)
	})
}

// BenchmarkParse is the parser alone over a generated transcript; ref is
// the parser as it was before its fast path (oldparser_test.go).
func BenchmarkParse(b *testing.B) {
	lines := genLines(400, rand.New(rand.NewPCG(9, 9)))
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	for _, c := range []struct {
		name string
		new  func() telemetry.Parser
	}{{"fast", func() telemetry.Parser { return newParser(windowConfig{}) }}, {"ref", func() telemetry.Parser { return newOldParser(windowConfig{}) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var dst []telemetry.Observation
			for b.Loop() {
				p := c.new()
				for _, l := range lines {
					dst, _ = p.Parse(dst[:0], l, telemetry.Provenance{})
				}
			}
		})
	}
}

// TestWatchMatchesReference follows whole files with telemetry.Watch, once
// with the parser and once with the reference: the observations it
// delivers (pressure and evidence of unusable lines included) are equal.
func TestWatchMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	sets := append(realSamples(t), genLines(80, rng))
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
			b.WriteString(`{"type":"user","sessionId":"the-end","message":{"role":"user","content":"end"},"uuid":"end"}` + "\n")
			path := filepath.Join(t.TempDir(), "t.jsonl")
			telemetrytest.WriteFile(t, path, b.String())
			run := func(np func() telemetry.Parser) []telemetry.Observation {
				r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Path: path, NewParser: np, Levels: telemetry.Levels{}, Tail: telemetry.TailConfig{FromStart: true, Poll: 5 * time.Millisecond, ForcePoll: true}})
				r.Until("last line", func(o telemetry.Observation) bool {
					return o.Kind == telemetry.ObsHarnessSession && o.Source.Offset == last
				})
				return r.Got
			}
			cfg := windowConfig{AutoCompactWindow: 60000}
			got := run(func() telemetry.Parser { return newParser(cfg) })
			want := run(func() telemetry.Parser { return newOldParser(cfg) })
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
