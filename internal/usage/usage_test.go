package usage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/adapters/gemini"
	"github.com/lifeloop/lifeloop/adapters/pi"
	"github.com/lifeloop/lifeloop/adapters/qwen"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

var update = flag.Bool("update", false, "rewrite the golden reports")

// sources are the harnesses whose real samples testdata/home holds.
var sources = []Source{{Harness: "claude", Reader: claude.Harness{}}, {Harness: "codex", Reader: codex.Harness{}}, {Harness: "pi", Reader: pi.Harness{}}, {Harness: "gemini", Reader: gemini.Harness{}},
	{Harness: "qwen", Reader: qwen.Harness{}}}

// home copies testdata/home into a temporary HOME.
func home(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/home", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/home", p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func scanner(t testing.TB, h string, pr *pricing.Pricer, warn *bytes.Buffer, src ...Source) *Scanner {
	t.Helper()
	if pr == nil {
		var err error
		if pr, err = pricing.New(""); err != nil {
			t.Fatal(err)
		}
	}
	if src == nil {
		src = sources
	}
	env := map[string]string{"HOME": h}
	s := &Scanner{Sources: src, Getenv: func(k string) string { return env[k] }, Pricer: pr,
		StateDir: filepath.Join(h, "state"), Location: time.UTC}
	if warn != nil {
		s.Warn = warn
	}
	return s
}

func report(t *testing.T, sc *Scan, by ...string) string {
	t.Helper()
	var b bytes.Buffer
	if err := sc.Group(by, Filter{}).WriteJSON(&b, PriceInfo{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestGoldenPerHarness: each harness's real session files, read through
// its adapter, give the tokens and costs of the golden report.
func TestGoldenPerHarness(t *testing.T) {
	for _, src := range sources {
		t.Run(src.Harness, func(t *testing.T) {
			var warn bytes.Buffer
			sc, err := scanner(t, home(t), nil, &warn, src).Run()
			if err != nil {
				t.Fatal(err)
			}
			if warn.Len() > 0 {
				t.Errorf("warnings on real samples: %s", warn.String())
			}
			got := report(t, sc, "harness", "project", "session", "model")
			golden := filepath.Join("testdata", "golden", src.Harness+".json")
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// TestClaudeTokensAsTheTranscriptHasThem checks the golden figures against
// the transcript itself: every assistant line's usage once per message
// and request id.
func TestClaudeTokensAsTheTranscriptHasThem(t *testing.T) {
	var in, out, cr, cw int64
	seen := map[string]bool{}
	for _, f := range []string{"tool-turn.jsonl", "compact.jsonl"} {
		b, _ := os.ReadFile(filepath.Join("testdata/home/.claude/projects/-home-dev-project", f))
		for _, line := range bytes.Split(b, []byte("\n")) {
			var l struct {
				Type      string `json:"type"`
				RequestID string `json:"requestId"`
				Message   struct {
					ID    string `json:"id"`
					Model string `json:"model"`
					Usage *struct {
						In  int64 `json:"input_tokens"`
						Out int64 `json:"output_tokens"`
						CR  int64 `json:"cache_read_input_tokens"`
						CW  int64 `json:"cache_creation_input_tokens"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &l) != nil || l.Type != "assistant" || l.Message.Usage == nil || l.Message.Model == "<synthetic>" {
				continue
			}
			if k := l.Message.ID + ":" + l.RequestID; seen[k] {
				continue
			} else {
				seen[k] = true
			}
			u := l.Message.Usage
			in, out, cr, cw = in+u.In, out+u.Out, cr+u.CR, cw+u.CW
		}
	}
	sc, err := scanner(t, home(t), nil, nil, sources[0]).Run()
	if err != nil {
		t.Fatal(err)
	}
	tot := sc.Group(nil, Filter{}).Total.Tokens
	if tot.Input != in || tot.Output != out || tot.CacheRead != cr || tot.CacheWrite != cw || in == 0 {
		t.Fatalf("read %+v; the transcripts hold input %d output %d cache read %d cache write %d", tot, in, out, cr, cw)
	}
}

// TestSecondRunReadsNothingNew: the index remembers every file; a run
// with nothing new reads no byte and reports the same.
func TestSecondRunReadsNothingNew(t *testing.T) {
	h := home(t)
	s := scanner(t, h, nil, nil)
	before := 0
	s.BeforeReading = func() { before++ }
	first, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	if before != 1 {
		t.Errorf("the first run called BeforeReading %d times, want once", before)
	}
	if first.BytesRead == 0 || first.Files != 11 {
		t.Fatalf("first run read %d bytes of %d files", first.BytesRead, first.Files)
	}
	s = scanner(t, h, nil, nil)
	s.BeforeReading = func() { t.Error("the second run called BeforeReading") }
	second, err := s.Run()
	if err != nil {
		t.Fatal(err)
	}
	if second.BytesRead != 0 {
		t.Fatalf("second run read %d bytes", second.BytesRead)
	}
	if a, b := report(t, first, "session", "model"), report(t, second, "session", "model"); a != b {
		t.Fatalf("the index changed the report:\n%s\n%s", a, b)
	}
	fi, _ := os.Stat(filepath.Join(h, "state", "usage", IndexFile))
	di, _ := os.Stat(filepath.Join(h, "state", "usage"))
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Fatalf("index %v, folder %v", fi.Mode(), di.Mode())
	}
}

// TestAppendedLinesAreAllThatIsRead: a file that grew is read from where
// the last run stopped, with the parser's state (a rollout's model and
// session are on its first lines).
func TestAppendedLinesAreAllThatIsRead(t *testing.T) {
	h := home(t)
	rollout := filepath.Join(h, ".codex/sessions/2026/11/21/rollout-2026-11-21T22-12-19-tool-turn.jsonl")
	b, _ := os.ReadFile(rollout)
	lines := bytes.SplitAfter(b, []byte("\n"))
	var last []byte // the last token_count: a call of 17 tokens
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"type":"token_count"`)) {
			last = l
		}
	}
	if _, err := scanner(t, h, nil, nil).Run(); err != nil {
		t.Fatal(err)
	}
	// The same call again, with a grown total: a new call, not a repeat.
	more := bytes.Replace(last, []byte(`"total_token_usage":{"input_tokens":24`), []byte(`"total_token_usage":{"input_tokens":36`), 1)
	more = bytes.Replace(more, []byte(`"total_tokens":34}`), []byte(`"total_tokens":51}`), 1)
	f, _ := os.OpenFile(rollout, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(more)
	f.Close()
	sc, err := scanner(t, h, nil, nil).Run()
	if err != nil {
		t.Fatal(err)
	}
	if sc.BytesRead != int64(len(more)) {
		t.Fatalf("read %d bytes, appended %d", sc.BytesRead, len(more))
	}
	for _, r := range sc.Group([]string{"session"}, Filter{}).Rows {
		if r.Keys["session"] == "01a2002a-de7b-7690-8f73-540566854e63" && (r.Calls != 3 || r.Tokens.Total() != 51) {
			t.Fatalf("after the append: %d calls, %d tokens", r.Calls, r.Tokens.Total())
		}
	}
}

// TestDamagedIndexIsRebuilt: an index that cannot be read, or whose
// identities a run finds out of order, is rebuilt, said once, and the
// report is unchanged.
func TestDamagedIndexIsRebuilt(t *testing.T) {
	h := home(t)
	first, err := scanner(t, h, nil, nil).Run()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(h, "state", "usage", IndexFile)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The identities out of order: found when a run reads them, one
	// with a file changed.
	disordered := slices.Clone(whole)
	at := binary.LittleEndian.Uint64(whole[len(whole)-16:])
	if binary.LittleEndian.Uint64(whole[len(whole)-8:]) < 2 {
		t.Fatal("the samples give fewer than two identities")
	}
	k0, k1 := disordered[at:at+12], disordered[at+12:at+24]
	t0 := slices.Clone(k0)
	copy(k0, k1)
	copy(k1, t0)
	touched := filepath.Join(h, ".claude/projects/-home-dev-project/tool-turn.jsonl")
	// Another file in its place, the index cut short, its identities out
	// of order, and an index of another version.
	for i, damaged := range [][]byte{[]byte("not an index"), whole[:len(whole)/2], disordered, []byte(indexMagic + "\x03rest")} {
		os.WriteFile(path, damaged, 0o600)
		if i == 2 {
			later := time.Now().Add(time.Minute)
			os.Chtimes(touched, later, later)
		}
		var warn bytes.Buffer
		again, err := scanner(t, h, nil, &warn).Run()
		if err != nil {
			t.Fatal(err)
		}
		want := "damaged: rebuilt"
		if i == 3 {
			want = "of another version: rebuilt"
		}
		if strings.Count(warn.String(), want) != 1 || again.BytesRead != first.BytesRead {
			t.Fatalf("%d: warned %q, read %d bytes (first run %d)", i, warn.String(), again.BytesRead, first.BytesRead)
		}
		if a, b := report(t, first, "day"), report(t, again, "day"); a != b {
			t.Fatalf("rebuilt index reports otherwise:\n%s\n%s", a, b)
		}
	}
}

// TestUnfinishedLastLineIsReportedOnce: a file whose last line is cut
// short is reported once and that line skipped; once it ends, it counts.
func TestUnfinishedLastLineIsReportedOnce(t *testing.T) {
	h := home(t)
	path := filepath.Join(h, ".claude/projects/-home-dev-project/tool-turn.jsonl")
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n"))
	var call []byte // an assistant line with usage, made a new call
	for _, l := range lines {
		if bytes.Contains(l, []byte(`"type":"assistant"`)) && bytes.Contains(l, []byte(`"output_tokens"`)) {
			call = bytes.Replace(bytes.TrimSuffix(l, []byte("\n")), []byte(`"id":"msg_`), []byte(`"id":"again-msg_`), 1)
			break
		}
	}
	if !bytes.Contains(call, []byte("again-")) {
		t.Fatal("no assistant line with a message id in the sample")
	}
	whole, err := scanner(t, home(t), nil, nil).Run()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, append(append([]byte{}, b...), call[:len(call)/2]...), 0o600)
	var warn bytes.Buffer
	for i := 0; i < 2; i++ {
		sc, err := scanner(t, h, nil, &warn).Run()
		if err != nil {
			t.Fatal(err)
		}
		if a, b := report(t, whole, "day"), report(t, sc, "day"); a != b {
			t.Fatalf("run %d counted the unfinished line:\n%s", i, b)
		}
	}
	if n := strings.Count(warn.String(), "\n"); n != 1 || !strings.Contains(warn.String(), "unfinished") {
		t.Fatalf("reported %d times: %q", n, warn.String())
	}
	os.WriteFile(path, append(append(append([]byte{}, b...), call...), '\n'), 0o600)
	sc, err := scanner(t, h, nil, &warn).Run()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sc.Group(nil, Filter{}).Total.Calls, whole.Group(nil, Filter{}).Total.Calls+1; got != want {
		t.Fatalf("the finished line: %d calls, want %d", got, want)
	}
}

// TestCorruptLinesAreSkippedNotFatal: a line that is not JSON is
// reported (once, with the count) and the rest of the file is read.
func TestCorruptLinesAreSkippedNotFatal(t *testing.T) {
	h := home(t)
	path := filepath.Join(h, ".claude/projects/-home-dev-project/compact.jsonl")
	b, _ := os.ReadFile(path)
	os.WriteFile(path, append([]byte("{not json\n\x00\x01garbage\n"), b...), 0o600)
	whole, _ := scanner(t, home(t), nil, nil).Run()
	var warn bytes.Buffer
	sc, err := scanner(t, h, nil, &warn).Run()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "2 unreadable lines skipped") || strings.Count(warn.String(), "\n") != 1 {
		t.Fatalf("warned %q", warn.String())
	}
	if a, b := report(t, whole, "day"), report(t, sc, "day"); a != b {
		t.Fatalf("the corrupt lines changed the report:\n%s\n%s", a, b)
	}
}

// TestUnknownModelCostIsUnknownAndUserFilePricesIt: the mock model of the
// Codex samples has no price (cost null, provenance unknown, "?" in the
// table); a user price file gives it one.
func TestUnknownModelCostIsUnknownAndUserFilePricesIt(t *testing.T) {
	h := home(t)
	sc, err := scanner(t, h, nil, nil, sources[1]).Run()
	if err != nil {
		t.Fatal(err)
	}
	rep := sc.Group(nil, Filter{})
	var table bytes.Buffer
	rep.WriteTable(&table)
	if rep.Total.Provenance() != "unknown" || rep.Total.CostText() != "?" || !strings.Contains(table.String(), "?") || strings.Contains(table.String(), "$0") {
		t.Fatalf("unpriced model: %s %s\n%s", rep.Total.Provenance(), rep.Total.CostText(), table.String())
	}
	var js struct {
		Total struct {
			Cost *float64 `json:"cost_usd"`
		} `json:"total"`
	}
	json.Unmarshal([]byte(report(t, sc)), &js)
	if js.Total.Cost != nil {
		t.Fatalf("an unknown cost printed as %v", *js.Total.Cost)
	}
	file := filepath.Join(h, "prices.json")
	os.WriteFile(file, []byte(`{"models":{"mock-model":{"input":1,"cache_read":0.5,"output":2}}}`), 0o600)
	pr, err := pricing.New(file)
	if err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	sc, err = scanner(t, h, pr, &warn, sources[1]).Run()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(warn.String(), "other prices") {
		t.Errorf("new prices did not rebuild the index: %q", warn.String())
	}
	tot := sc.Group(nil, Filter{}).Total
	want := (float64(tot.Tokens.Input)*1 + float64(tot.Tokens.CacheRead)*0.5 + float64(tot.Tokens.Output)*2) / 1e6
	if tot.Provenance() != "estimated" || tot.Estimated != want {
		t.Fatalf("user-priced: %s %v, want estimated %v", tot.Provenance(), tot.Estimated, want)
	}
}

// TestACallTwoFilesHoldIsCountedOnce: a transcript copied into another
// project (as a resumed session replays its history) adds nothing. The
// samples were recorded against a mock that sends no request id, so
// their lines are given one here, as the real service's have.
func TestACallTwoFilesHoldIsCountedOnce(t *testing.T) {
	h := home(t)
	path := filepath.Join(h, ".claude/projects/-home-dev-project/compact.jsonl")
	b, _ := os.ReadFile(path)
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"type":"assistant"`)) {
			lines[i] = append([]byte(`{"requestId":"req_`+strconv.Itoa(i/2)+`",`), l[1:]...)
		}
	}
	b = bytes.Join(lines, nil)
	os.WriteFile(path, b, 0o600)
	once, _ := scanner(t, h, nil, nil, sources[0]).Run()
	os.MkdirAll(filepath.Join(h, ".claude/projects/-home-dev-other"), 0o700)
	os.WriteFile(filepath.Join(h, ".claude/projects/-home-dev-other/copy.jsonl"), b, 0o600)
	sc, err := scanner(t, h, nil, nil, sources[0]).Run()
	if err != nil {
		t.Fatal(err)
	}
	if a, b := once.Group(nil, Filter{}).Total, sc.Group(nil, Filter{}).Total; a.Tokens != b.Tokens || a.Calls != b.Calls {
		t.Fatalf("the copy counted again: %+v, then %+v", a.Tokens, b.Tokens)
	}
}

// TestSinceAndUntilKeepTheirDays filters by day, bounds included.
func TestSinceAndUntilKeepTheirDays(t *testing.T) {
	sc, err := scanner(t, home(t), nil, nil).Run()
	if err != nil {
		t.Fatal(err)
	}
	all := sc.Group([]string{"day"}, Filter{})
	if len(all.Rows) == 0 {
		t.Fatal("no days")
	}
	d := all.Rows[0].Keys["day"]
	if got := sc.Group([]string{"day"}, Filter{Since: d, Until: d}); len(got.Rows) != 1 || got.Rows[0].Keys["day"] != d {
		t.Fatalf("--since %s --until %s: %+v", d, d, got.Rows)
	}
	if got := sc.Group([]string{"day"}, Filter{Since: "2099-01-01"}); len(got.Rows) != 0 || got.Total.Calls != 0 {
		t.Fatalf("a future --since kept %d rows", len(got.Rows))
	}
}

// TestPiCostIsNative: Pi records each call's cost; the report shows it
// as native, the sum of the entries' usage.cost.total.
func TestPiCostIsNative(t *testing.T) {
	var want float64
	var calls int64
	files, _ := filepath.Glob("testdata/home/.pi/agent/sessions/*/*.jsonl")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		for _, line := range bytes.Split(b, []byte("\n")) {
			var l struct {
				Message struct {
					Role  string `json:"role"`
					Usage struct {
						Total int64 `json:"totalTokens"`
						Cost  struct {
							Total float64 `json:"total"`
						} `json:"cost"`
					} `json:"usage"`
				} `json:"message"`
			}
			if json.Unmarshal(line, &l) == nil && l.Message.Role == "assistant" && l.Message.Usage.Total > 0 {
				want += l.Message.Usage.Cost.Total
				calls++
			}
		}
	}
	sc, err := scanner(t, home(t), nil, nil, sources[2]).Run()
	if err != nil {
		t.Fatal(err)
	}
	tot := sc.Group(nil, Filter{}).Total
	if calls == 0 || tot.Calls != calls || tot.Provenance() != "native" || math.Abs(tot.Native-want) > 1e-12 {
		t.Fatalf("%d calls, %s $%v; the files hold %d calls costing $%v", tot.Calls, tot.Provenance(), tot.Native, calls, want)
	}
}

// TestFilesThatComeAndGo: a file gone since the last run leaves the
// report, and the run after it (nothing new) agrees; the file back is
// read again and the report is the first one.
func TestFilesThatComeAndGo(t *testing.T) {
	h := home(t)
	rollout := filepath.Join(h, ".codex/sessions/2026/11/21/rollout-2026-11-21T22-12-19-tool-turn.jsonl")
	b, err := os.ReadFile(rollout)
	if err != nil {
		t.Fatal(err)
	}
	run := func() (*Scan, string) {
		t.Helper()
		sc, err := scanner(t, h, nil, nil).Run()
		if err != nil {
			t.Fatal(err)
		}
		return sc, report(t, sc, "session", "model")
	}
	_, all := run()
	if err := os.Remove(rollout); err != nil {
		t.Fatal(err)
	}
	gone, without := run()
	if gone.Files != 10 || gone.BytesRead != 0 || without == all || strings.Contains(without, "01a2002a-de7b-7690-8f73-540566854e63") {
		t.Fatalf("with the rollout gone: %d files, %d bytes read, report\n%s", gone.Files, gone.BytesRead, without)
	}
	if sc, again := run(); sc.BytesRead != 0 || again != without {
		t.Fatalf("the run after: %d bytes read, report\n%s\nwant\n%s", sc.BytesRead, again, without)
	}
	if err := os.WriteFile(rollout, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if sc, back := run(); sc.BytesRead != int64(len(b)) || back != all {
		t.Fatalf("with the rollout back: %d bytes read, report\n%s\nwant\n%s", sc.BytesRead, back, all)
	}
}
