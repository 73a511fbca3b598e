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

// BenchmarkUsage measures `lifeloop usage` (docs/usage.md) on generated
// Claude Code corpora, against native ccusage on the same folder.
//
//   - cold/<N>MiB: LIFELOOP_BENCH_USAGE_MIB (default 64) of transcripts in
//     files of 16 MiB, read with an empty state folder each time:
//     `lifeloop usage --json --utc --by day`. ns/op and MB/s are its wall
//     time, cpu-s and peak-RSS-MiB its own rusage (measure: through
//     rusagerun, so the peak is not this process's).
//   - cold/<N>MiB/ccusage: `ccusage claude daily --json --offline
//     --timezone UTC` on the same folder (the native binary of ccusage 20:
//     LIFELOOP_CCUSAGE_NATIVE, else .cache/bench-tools/ccusage-native as
//     `make bench-tools` installs it; skipped when neither exists), with
//     time-, cpu- and rss-vs-lifeloop.
//   - Agreement: in every run of either, the token totals (input, output,
//     cache creation, cache read) must equal what the generator wrote,
//     counted once per (message.id, requestId): lifeloop's and ccusage's
//     totals are then equal to each other.
//   - cold-codex/<N>MiB and cold-codex/<N>MiB/ccusage: the same over
//     one Codex rollout of N MiB (writeCodexRollout: the bundled real
//     turn over and over), ccusage as `ccusage codex daily …`; the
//     totals checked are input and output (the turn has no cached
//     tokens, and ccusage's Codex report names no cache totals).
//   - cold/10000files: the same, cold, over 10,000 small session files
//     (one turn each, ten projects), and ccusage on them: the cost of
//     each file rather than of each byte.
//   - warm/10000files: the second run over 10,000 session files with
//     nothing new (the index answers): ns/op is its wall time.
func BenchmarkUsage(b *testing.B) {
	sizes := os.Getenv("LIFELOOP_BENCH_USAGE_MIB")
	if sizes == "" {
		sizes = "64"
	}
	for _, s := range strings.Split(sizes, ",") {
		mib, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || mib <= 0 {
			b.Fatalf("LIFELOOP_BENCH_USAGE_MIB: %q is not a size in MiB", s)
		}
		b.Run(fmt.Sprintf("cold/%dMiB", mib), func(b *testing.B) {
			fx := writeUsageCorpus(b, int64(mib)<<20, 16<<20, 0)
			var ll catchUpResult
			b.Run("lifeloop", func(b *testing.B) { ll = benchUsageCold(b, fx) })
			b.Run("ccusage", func(b *testing.B) { benchCCUsageNative(b, fx, ll) })
		})
	}
	for _, s := range strings.Split(sizes, ",") {
		mib, _ := strconv.Atoi(strings.TrimSpace(s))
		b.Run(fmt.Sprintf("cold-codex/%dMiB", mib), func(b *testing.B) {
			fx := writeCodexUsageCorpus(b, int64(mib)<<20)
			var ll catchUpResult
			b.Run("lifeloop", func(b *testing.B) { ll = benchUsageCold(b, fx) })
			b.Run("ccusage", func(b *testing.B) { benchCCUsageNative(b, fx, ll) })
		})
	}
	b.Run("cold/10000files", func(b *testing.B) {
		fx := writeUsageCorpus(b, 1<<62, 1, 10000)
		var ll catchUpResult
		b.Run("lifeloop", func(b *testing.B) { ll = benchUsageCold(b, fx) })
		b.Run("ccusage", func(b *testing.B) { benchCCUsageNative(b, fx, ll) })
	})
	b.Run("warm/10000files", func(b *testing.B) {
		fx := writeUsageCorpus(b, 1<<62, 1, 10000)
		benchUsageWarm(b, fx)
	})
}

// usageCorpus is a generated Claude Code configuration folder, or Codex
// home, and what its files hold.
type usageCorpus struct {
	home, configDir                         string
	size                                    int64
	files                                   int
	input, output, cacheCreation, cacheRead int64
	// codex: a Codex home (configDir is $CODEX_HOME), read by `ccusage
	// codex`, whose report has no cache totals to check.
	codex bool
}

// writeCodexUsageCorpus is writeCodexRollout's rollout of about size
// bytes as a usageCorpus.
func writeCodexUsageCorpus(b *testing.B, size int64) *usageCorpus {
	cf := writeCodexRollout(b, size)
	return &usageCorpus{home: cf.home, configDir: filepath.Join(cf.home, ".codex"), size: cf.size, files: 1,
		input: cf.input, output: cf.output, codex: true}
}

// env is the environment lifeloop and ccusage run in over the corpus.
func (fx *usageCorpus) env() []string {
	x := filepath.Join(fx.home, "xdg")
	env := []string{"HOME=" + fx.home, "XDG_CONFIG_HOME=" + x}
	if fx.codex {
		return append(env, "CODEX_HOME="+fx.configDir)
	}
	return append(env, "CLAUDE_CONFIG_DIR="+fx.configDir)
}

// writeUsageCorpus writes transcripts (claudeGen's lines) of about size
// bytes in all, or files files when not 0, a new file and session every
// perFile bytes (at least one turn), spread over ten projects.
func writeUsageCorpus(b *testing.B, size, perFile int64, files int) *usageCorpus {
	b.Helper()
	dir := b.TempDir()
	fx := &usageCorpus{home: filepath.Join(dir, "home")}
	fx.configDir = filepath.Join(fx.home, ".claude")
	g := &claudeGen{at: time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), context: 20000}
	for g.n < size && (files == 0 || fx.files < files) {
		cwd := filepath.Join(dir, fmt.Sprintf("project-%d", fx.files%10))
		proj := filepath.Join(fx.configDir, "projects", claude.ProjectDirName(cwd))
		if err := os.MkdirAll(proj, 0o700); err != nil {
			b.Fatal(err)
		}
		g.cwd, g.session = cwd, genUUID(uint64(0x5e55+fx.files))
		f, err := os.OpenFile(filepath.Join(proj, g.session+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			b.Fatal(err)
		}
		g.w = bufio.NewWriterSize(f, 1<<20)
		start := g.n
		for g.n-start < perFile {
			g.turn()
		}
		if err := g.w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		fx.files++
	}
	fx.size = g.n
	fx.input, fx.output, fx.cacheCreation, fx.cacheRead = g.input, g.output, g.cacheCreation, g.cacheRead
	return fx
}

// runUsage runs `lifeloop usage --json --utc --by day` with state,
// checks its token totals against the corpus's and returns its CPU time
// and peak RSS in KiB (measure).
func runUsage(b *testing.B, ll string, fx *usageCorpus, state string) (time.Duration, int64) {
	cmd := exec.CommandContext(b.Context(), ll, "usage", "--json", "--utc", "--by", "day", "--state-dir", state)
	cmd.Env = fx.env()
	usage := measure(b, cmd)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		b.Fatalf("lifeloop usage: %v\nstderr: %s", err, errOut.String())
	}
	var rep struct {
		Total struct {
			Input      int64 `json:"input_tokens"`
			Output     int64 `json:"output_tokens"`
			CacheWrite int64 `json:"cache_write_tokens"`
			CacheRead  int64 `json:"cache_read_tokens"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
		b.Fatalf("lifeloop usage printed %.500q: %v", out.String(), err)
	}
	t := rep.Total
	if t.Input != fx.input || t.Output != fx.output || t.CacheWrite != fx.cacheCreation || t.CacheRead != fx.cacheRead {
		b.Fatalf("lifeloop usage totals %+v; the corpus holds input %d output %d cache creation %d cache read %d",
			t, fx.input, fx.output, fx.cacheCreation, fx.cacheRead)
	}
	return usage()
}

func benchUsageCold(b *testing.B, fx *usageCorpus) catchUpResult {
	ll := lifeloopBin(b)
	var wall, cpu time.Duration
	var peak int64
	n := 0
	for b.Loop() {
		state := filepath.Join(b.TempDir(), "state")
		start := time.Now()
		c, rss := runUsage(b, ll, fx, state)
		wall += time.Since(start)
		cpu += c
		peak = max(peak, rss)
		n++
	}
	res := catchUpResult{perOp: wall / time.Duration(n), cpu: cpu / time.Duration(n), rssMiB: float64(peak) / 1024}
	b.ReportMetric(float64(fx.size)/1e6/res.perOp.Seconds(), "MB/s")
	b.ReportMetric(res.cpu.Seconds(), "cpu-s")
	b.ReportMetric(res.rssMiB, "peak-RSS-MiB")
	b.ReportMetric(float64(fx.files), "files")
	return res
}

func benchUsageWarm(b *testing.B, fx *usageCorpus) {
	ll := lifeloopBin(b)
	state := filepath.Join(b.TempDir(), "state")
	runUsage(b, ll, fx, state) // cold: builds the index
	var cpu time.Duration
	n := 0
	for b.Loop() {
		c, _ := runUsage(b, ll, fx, state)
		cpu += c
		n++
	}
	b.ReportMetric(float64(fx.files), "files")
	b.ReportMetric((cpu / time.Duration(n)).Seconds(), "cpu-s")
}

// ccusageNativeBin returns LIFELOOP_CCUSAGE_NATIVE, else the native
// binary `make bench-tools` installs ("" when neither exists).
func ccusageNativeBin(testing.TB) string {
	if p := os.Getenv("LIFELOOP_CCUSAGE_NATIVE"); p != "" {
		return p
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return ""
	}
	p := filepath.Join(root, ".cache", "bench-tools", "ccusage-native", "node_modules", "@ccusage", "ccusage-linux-x64", "bin", "ccusage")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

func benchCCUsageNative(b *testing.B, fx *usageCorpus, ll catchUpResult) {
	bin := ccusageNativeBin(b)
	if bin == "" {
		b.Skip("no native ccusage: run `make bench-tools` or set LIFELOOP_CCUSAGE_NATIVE to its binary")
	}
	var wall, cpu time.Duration
	var peak int64
	n := 0
	for b.Loop() {
		which := "claude"
		if fx.codex {
			which = "codex"
		}
		cmd := exec.CommandContext(b.Context(), bin, which, "daily", "--json", "--offline", "--timezone", "UTC")
		cmd.Env = append(fx.env(), "XDG_CACHE_HOME="+filepath.Join(fx.home, "xdg"), "NO_COLOR=1")
		usage := measure(b, cmd)
		var out, errOut strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errOut
		start := time.Now()
		err := cmd.Run()
		wall += time.Since(start)
		if err != nil {
			b.Fatalf("%s: %v\nstderr: %s", bin, err, errOut.String())
		}
		var rep struct {
			Totals map[string]json.RawMessage `json:"totals"` // Codex's holds an array too
		}
		if err := json.Unmarshal([]byte(out.String()), &rep); err != nil {
			b.Fatalf("ccusage printed %.500q: %v", out.String(), err)
		}
		want := map[string]int64{
			"inputTokens": fx.input, "outputTokens": fx.output,
			"cacheCreationTokens": fx.cacheCreation, "cacheReadTokens": fx.cacheRead,
		}
		if fx.codex {
			want = map[string]int64{"inputTokens": fx.input, "outputTokens": fx.output}
		}
		for k, v := range want {
			var got float64
			_ = json.Unmarshal(rep.Totals[k], &got) // absent: 0, a mismatch
			if int64(got) != v {
				b.Fatalf("ccusage totals %s %d: want %d (lifeloop's)", k, int64(got), v)
			}
		}
		c, rss := usage()
		cpu += c
		peak = max(peak, rss)
		n++
	}
	per := wall / time.Duration(n)
	rss := float64(peak) / 1024
	b.ReportMetric(float64(fx.size)/1e6/per.Seconds(), "MB/s")
	b.ReportMetric((cpu / time.Duration(n)).Seconds(), "cpu-s")
	b.ReportMetric(rss, "peak-RSS-MiB")
	if ll.perOp > 0 {
		b.ReportMetric(float64(per)/float64(ll.perOp), "time-vs-lifeloop")
		b.ReportMetric((cpu/time.Duration(n)).Seconds()/ll.cpu.Seconds(), "cpu-vs-lifeloop")
		b.ReportMetric(rss/ll.rssMiB, "rss-vs-lifeloop")
	}
}
