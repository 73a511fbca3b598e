package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
)

// BenchmarkWatchCatchUp measures `lifeloop watch --adapter claude FILE`
// catching up on a large Claude Code transcript that already exists: the
// file is read from its start to learn the session id and the pressure
// level. Sizes in MiB come from LIFELOOP_BENCH_TRANSCRIPT_MIB (a comma
// list, default 64); the tracker's figures are for 100 and 1024.
//
// For each size one transcript is generated (streamed, never held in
// memory) at <home>/.claude/projects/<cwd>/<uuid>.jsonl. Its last turn
// belongs to a second session id, so lifeloop records a second binding
// receipt only once it has parsed the file to its end; the benchmark
// fails when that receipt is missing or points elsewhere.
//
// Sub-benchmarks:
//
//   - lifeloop: ns/op and MB/s are the catch-up time, from launching
//     lifeloop until that last binding receipt reaches its --events fd
//     (so the --until-idle wait that ends the watch is excluded; wall-s
//     is the whole run including it); cpu-s is its user+system time and
//     peak-RSS-MiB its own Maxrss (measure).
//   - ccusage: for reference, the native ccusage's `ccusage claude daily
//     --json --offline --timezone UTC` with HOME and CLAUDE_CONFIG_DIR on
//     the same folder (its binary, run directly: LIFELOOP_CCUSAGE_NATIVE,
//     else the one `make bench-tools` installs; skipped when neither).
//     Its token totals are checked against the generated ones. ns/op and
//     MB/s are its wall time; cpu-s and peak-RSS-MiB come from its own
//     Rusage (measure). When lifeloop ran in the same run, time-,
//     cpu- and rss-vs-lifeloop are ccusage's figure divided by lifeloop's
//     (below 1: ccusage used less).
func BenchmarkWatchCatchUp(b *testing.B) {
	sizes := os.Getenv("LIFELOOP_BENCH_TRANSCRIPT_MIB")
	if sizes == "" {
		sizes = "64"
	}
	for _, s := range strings.Split(sizes, ",") {
		mib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || mib <= 0 {
			b.Fatalf("LIFELOOP_BENCH_TRANSCRIPT_MIB: %q is not a size in MiB", s)
		}
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			fx := writeCatchUpTranscript(b, int64(mib)<<20)
			var ll catchUpResult
			b.Run("lifeloop", func(b *testing.B) { ll = benchWatchCatchUp(b, fx) })
			b.Run("ccusage", func(b *testing.B) { benchCCUsage(b, fx, ll) })
		})
	}
}

// catchUpResult is what one sub-benchmark measured (zero when it did not
// run).
type catchUpResult struct {
	perOp, cpu time.Duration
	rssMiB     float64
}

func benchWatchCatchUp(b *testing.B, fx *catchUpFixture) catchUpResult {
	ll := lifeloopBin(b)
	const idle = 500 * time.Millisecond
	var catchUp, wall, cpu time.Duration
	var peak int64
	n := 0
	for b.Loop() {
		state := filepath.Join(b.TempDir(), "state")
		evr, evw, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		cmd := exec.CommandContext(b.Context(), ll, "watch", "--state-dir", state, "--adapter", "claude", "--cwd", fx.cwd,
			"--until-idle", idle.String(), "--events", "fd:3", fx.path)
		cmd.Env = append(os.Environ(), "HOME="+fx.home, "CLAUDE_CONFIG_DIR="+fx.configDir)
		cmd.ExtraFiles = []*os.File{evw}
		usage := measure(b, cmd)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		err = cmd.Start()
		evw.Close()
		if err != nil {
			evr.Close()
			b.Fatal(err)
		}
		// The receipts as they arrive; the binding of the last session
		// is recorded when lifeloop has parsed the file to its end.
		type binding struct {
			at     time.Time
			offset float64
		}
		got := make(chan []binding, 1)
		go func() {
			defer evr.Close()
			var bs []binding
			sc := bufio.NewScanner(evr)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for sc.Scan() {
				at := time.Now()
				var r struct {
					Event   string         `json:"event"`
					Summary map[string]any `json:"telemetry_summary"`
				}
				if json.Unmarshal(sc.Bytes(), &r) == nil && r.Event == "session.started" && r.Summary["binding"] == "harness_session_id" {
					off, _ := r.Summary["offset"].(float64)
					bs = append(bs, binding{at, off})
				}
			}
			got <- bs
		}()
		err = cmd.Wait()
		end := time.Now()
		bs := <-got
		if err != nil {
			b.Fatalf("lifeloop watch: %v\nstdout: %s\nstderr: %s", err, out.String(), errOut.String())
		}
		var sum struct {
			Reason   string `json:"reason"`
			Receipts int    `json:"receipts"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(out.String())), &sum); err != nil || sum.Reason != "idle" {
			b.Fatalf("lifeloop watch printed %q (%v)", out.String(), err)
		}
		if len(bs) != 2 || int64(bs[1].offset) != fx.lastSessionOffset {
			b.Fatalf("want two bindings, the last at offset %d (the last session's first line): got %+v; the file was not read to its end", fx.lastSessionOffset, bs)
		}
		catchUp += bs[1].at.Sub(start)
		wall += end.Sub(start)
		c, rss := usage()
		cpu += c
		peak = max(peak, rss)
		n++
	}
	res := catchUpResult{perOp: catchUp / time.Duration(n), cpu: cpu / time.Duration(n), rssMiB: float64(peak) / 1024}
	b.ReportMetric(float64(res.perOp.Nanoseconds()), "ns/op")
	b.ReportMetric(float64(fx.size)/1e6/res.perOp.Seconds(), "MB/s")
	b.ReportMetric((wall / time.Duration(n)).Seconds(), "wall-s")
	b.ReportMetric(res.cpu.Seconds(), "cpu-s")
	b.ReportMetric(res.rssMiB, "peak-RSS-MiB")
	return res
}

func benchCCUsage(b *testing.B, fx *catchUpFixture, ll catchUpResult) {
	bin := ccusageBaseline()
	if bin == "" {
		b.Skip("no native ccusage: run `make bench-tools` or set LIFELOOP_CCUSAGE_NATIVE to its binary for the reference figures")
	}
	b.SetBytes(fx.size)
	var peak int64
	var total, cpu time.Duration
	n := 0
	for b.Loop() {
		cmd := exec.CommandContext(b.Context(), bin, "claude", "daily", "--json", "--offline", "--timezone", "UTC")
		cmd.Env = append(append(os.Environ(), "HOME="+fx.home, "CLAUDE_CONFIG_DIR="+fx.configDir), ccusageEnv(fx.home)...)
		usage := measure(b, cmd)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		err := cmd.Run()
		total += time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v\nstderr: %s", bin, err, errOut.String())
		}
		var rep struct {
			Totals map[string]float64 `json:"totals"`
		}
		if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
			b.Fatalf("ccusage printed %.500q: %v", out.String(), err)
		}
		want := map[string]int64{
			"inputTokens": fx.input, "outputTokens": fx.output,
			"cacheCreationTokens": fx.cacheCreation, "cacheReadTokens": fx.cacheRead,
		}
		for k, v := range want {
			if int64(rep.Totals[k]) != v {
				b.Fatalf("ccusage totals %v: want %s %d; it did not read the whole transcript", rep.Totals, k, v)
			}
		}
		c, rss := usage()
		cpu += c
		peak = max(peak, rss)
		n++
	}
	rss := float64(peak) / 1024
	cpu /= time.Duration(n)
	b.ReportMetric(cpu.Seconds(), "cpu-s")
	b.ReportMetric(rss, "peak-RSS-MiB")
	if ll.perOp > 0 {
		b.ReportMetric(float64(total/time.Duration(n))/float64(ll.perOp), "time-vs-lifeloop")
		b.ReportMetric(cpu.Seconds()/ll.cpu.Seconds(), "cpu-vs-lifeloop")
		b.ReportMetric(rss/ll.rssMiB, "rss-vs-lifeloop")
	}
}

// catchUpFixture is a generated Claude Code home with one large
// transcript, and what it holds.
type catchUpFixture struct {
	home, configDir, cwd, path string
	size                       int64
	// lastSessionOffset is the byte offset of the first line of the last
	// session id.
	lastSessionOffset int64
	// Token totals over distinct (message.id, requestId).
	input, output, cacheCreation, cacheRead int64
}

// writeCatchUpTranscript streams a Claude Code transcript of at least size
// bytes: turns of a user prompt, an assistant reply written as two
// content-block lines (text, then tool_use) sharing message.id, requestId
// and usage, a tool_result with the tool's output, and an end_turn reply;
// the context grows each turn and is compacted (compact_boundary plus the
// summary) near 160k tokens. The last turn is under a new session id.
func writeCatchUpTranscript(b *testing.B, size int64) *catchUpFixture {
	b.Helper()
	dir := b.TempDir()
	fx := &catchUpFixture{home: filepath.Join(dir, "home"), cwd: filepath.Join(dir, "project")}
	fx.configDir = filepath.Join(fx.home, ".claude")
	proj := filepath.Join(fx.configDir, "projects", claude.ProjectDirName(fx.cwd))
	if err := os.MkdirAll(proj, 0o700); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(fx.cwd, 0o700); err != nil {
		b.Fatal(err)
	}
	g := &claudeGen{cwd: fx.cwd, session: genUUID(0x5e55), at: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)}
	fx.path = filepath.Join(proj, g.session+".jsonl")
	f, err := os.OpenFile(fx.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	g.w = bufio.NewWriterSize(f, 1<<20)
	g.context = 20000
	for g.n < size {
		g.turn()
	}
	g.session = genUUID(0x5e56)
	fx.lastSessionOffset = g.n
	g.turn()
	if err := g.w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	fx.size = g.n
	fx.input, fx.output, fx.cacheCreation, fx.cacheRead = g.input, g.output, g.cacheCreation, g.cacheRead
	return fx
}

// claudeGen writes transcript lines shaped like Claude Code 2.1's.
type claudeGen struct {
	w       *bufio.Writer
	buf     []byte
	n       int64 // bytes written
	cwd     string
	session string
	at      time.Time
	seq     uint64 // uuids, message ids, request ids
	turns   int
	parent  string
	context int64 // tokens in the context

	input, output, cacheCreation, cacheRead int64
}

// genUUID formats n as a version-4 shaped UUID.
func genUUID(n uint64) string {
	return fmt.Sprintf("%08x-%04x-4%03x-a%03x-%012x", uint32(n*2654435761), uint16(n>>32), n&0xfff, (n>>12)&0xfff, n*0x9e3779b97f4a7c15>>16)
}

// genText is the prose the generated prompts, replies and tool output
// are cut from.
var genText = strings.Repeat("The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. ", 40)

func (g *claudeGen) text(n int) string { return genText[:n] }

// head starts a line with the fields every message line has.
func (g *claudeGen) head(uuid string) {
	g.buf = append(g.buf[:0], `{"parentUuid":`...)
	if g.parent == "" {
		g.buf = append(g.buf, "null"...)
	} else {
		g.buf = strconv.AppendQuote(g.buf, g.parent)
	}
	g.buf = append(g.buf, `,"isSidechain":false,`...)
	g.parent = uuid
}

// tail ends a line with the common envelope and writes it.
func (g *claudeGen) tail(typ, uuid string) {
	g.at = g.at.Add(1700 * time.Millisecond)
	g.buf = append(g.buf, `"type":"`...)
	g.buf = append(g.buf, typ...)
	g.buf = append(g.buf, `","uuid":"`...)
	g.buf = append(g.buf, uuid...)
	g.buf = append(g.buf, `","timestamp":"`...)
	g.buf = g.at.AppendFormat(g.buf, "2006-01-02T15:04:05.000Z")
	g.buf = append(g.buf, `","userType":"external","entrypoint":"cli","cwd":`...)
	g.buf = strconv.AppendQuote(g.buf, g.cwd)
	g.buf = append(g.buf, `,"sessionId":"`...)
	g.buf = append(g.buf, g.session...)
	g.buf = append(g.buf, `","version":"2.1.197","gitBranch":"main"}`+"\n"...)
	g.write()
}

func (g *claudeGen) write() {
	_, _ = g.w.Write(g.buf) // a failure shows in Flush
	g.n += int64(len(g.buf))
}

func (g *claudeGen) next() string {
	g.seq++
	return genUUID(g.seq)
}

// user writes a user line whose message content is content (JSON).
func (g *claudeGen) user(prompt, content, extra string) {
	uuid := g.next()
	g.head(uuid)
	g.buf = append(g.buf, `"promptId":"`...)
	g.buf = append(g.buf, prompt...)
	g.buf = append(g.buf, `","message":{"role":"user","content":`...)
	g.buf = append(g.buf, content...)
	g.buf = append(g.buf, `},`...)
	g.buf = append(g.buf, extra...)
	g.tail("user", uuid)
}

// assistant writes one content block of a model response; usage is
// counted once per response (first block).
func (g *claudeGen) assistant(msg, req, block, stop string, in, cc, cr, out int64, first bool) {
	uuid := g.next()
	g.head(uuid)
	g.buf = append(g.buf, `"message":{"id":"`...)
	g.buf = append(g.buf, msg...)
	g.buf = append(g.buf, `","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[`...)
	g.buf = append(g.buf, block...)
	g.buf = append(g.buf, `],"stop_reason":`...)
	if stop == "" {
		g.buf = append(g.buf, "null"...)
	} else {
		g.buf = strconv.AppendQuote(g.buf, stop)
	}
	g.buf = append(g.buf, `,"stop_sequence":null,"usage":{"input_tokens":`...)
	g.buf = strconv.AppendInt(g.buf, in, 10)
	g.buf = append(g.buf, `,"cache_creation_input_tokens":`...)
	g.buf = strconv.AppendInt(g.buf, cc, 10)
	g.buf = append(g.buf, `,"cache_read_input_tokens":`...)
	g.buf = strconv.AppendInt(g.buf, cr, 10)
	g.buf = append(g.buf, `,"output_tokens":`...)
	g.buf = strconv.AppendInt(g.buf, out, 10)
	g.buf = append(g.buf, `,"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":`...)
	g.buf = strconv.AppendInt(g.buf, cc, 10)
	g.buf = append(g.buf, `}}},"requestId":"`...)
	g.buf = append(g.buf, req...)
	g.buf = append(g.buf, `",`...)
	g.tail("assistant", uuid)
	if first {
		g.input += in
		g.cacheCreation += cc
		g.cacheRead += cr
		g.output += out
	}
}

// response is one model request: its ids and usage, the context growing
// by what it wrote.
func (g *claudeGen) response() (msg, req string, in, cc, cr, out int64) {
	g.seq++
	msg = fmt.Sprintf("msg_01%022x", g.seq*0x9e3779b97f4a7c15)
	req = fmt.Sprintf("req_011C%020x", g.seq*0xc2b2ae3d27d4eb4f)
	in = 3 + int64(g.seq%7)
	cc = 400 + int64(g.seq*37%2500)
	out = 60 + int64(g.seq*53%700)
	cr = g.context
	g.context += cc + out
	return
}

func (g *claudeGen) turn() {
	g.turns++
	i := g.turns
	prompt := g.next()
	g.user(prompt, strconv.Quote(fmt.Sprintf("turn %d: ", i)+g.text(80+i*13%400)), `"permissionMode":"default","promptSource":"cli",`)

	msg, req, in, cc, cr, out := g.response()
	g.assistant(msg, req, `{"type":"text","text":`+strconv.Quote(g.text(100+i*7%300))+`}`, "", in, cc, cr, out, true)
	tool := fmt.Sprintf("toolu_01%020x", uint64(i)*0x9e3779b97f4a7c15)
	g.assistant(msg, req, `{"type":"tool_use","id":"`+tool+`","name":"Bash","input":{"command":"grep -rn pattern ./src","description":"search the sources"}}`, "tool_use", in, cc, cr, out, false)
	assistantUUID := g.parent

	result := g.text(300 + i*131%2500)
	g.user(prompt, `[{"tool_use_id":"`+tool+`","type":"tool_result","content":`+strconv.Quote(result)+`,"is_error":false}]`,
		`"toolUseResult":{"stdout":`+strconv.Quote(result)+`,"stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false},"sourceToolAssistantUUID":"`+assistantUUID+`",`)

	msg, req, in, cc, cr, out = g.response()
	g.assistant(msg, req, `{"type":"text","text":`+strconv.Quote(g.text(200+i*17%600))+`}`, "end_turn", in, cc, cr, out, true)

	if g.context > 160000 {
		uuid := g.next()
		g.head(uuid)
		g.buf = append(g.buf, `"subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"level":"info","compactMetadata":{"trigger":"auto","preTokens":`...)
		g.buf = strconv.AppendInt(g.buf, g.context, 10)
		g.buf = append(g.buf, `,"postTokens":18000},`...)
		g.tail("system", uuid)
		g.user(g.next(), strconv.Quote("This session is being continued from a previous conversation. Summary: "+g.text(1500)), `"isCompactSummary":true,"isVisibleInTranscriptOnly":true,`)
		g.context = 18000
	}
}
