package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
)

// BenchmarkUsageTokscale measures `lifeloop usage` cold against tokscale
// on the same generated Claude Code corpus (writeUsageCorpus: files of 16
// MiB over ten projects), LIFELOOP_BENCH_USAGE_MIB in MiB (default 64).
// The two run alternately, LIFELOOP_BENCH_RUNS pairs (default 7) after
// one warm-up pair, each whole process through /usr/bin/time when it
// exists (a Go parent's RSS would show as the child's peak otherwise):
//
//   - lifeloop: `lifeloop usage --json --utc --by day` with an empty state
//     folder each run;
//   - tokscale: `tokscale models --json --claude --no-spinner`, the command
//     `make bench-tools` installs (a Bun script; LIFELOOP_TOKSCALE names
//     another, whose folder then goes first on PATH), skipped when neither.
//
// tokscale has no offline switch: it fetches LiteLLM's and OpenRouter's
// price lists unless its own cache of them ($XDG_CACHE_HOME/tokscale) is
// under an hour old, and fails without them. Each of its runs gets that
// cache written just before, holding the corpus's one model at Anthropic's
// list prices, as a user who ran it within the hour has it; it then makes
// no connection.
//
// Every run of either must report the corpus's token totals (input,
// output, cache creation, cache read, once per message.id and requestId);
// a run that does not fails the benchmark. Reported: each side's median
// wall, CPU and peak, lifeloop's MB/s, and the medians of the per-pair
// ratios (tokscale's figure over lifeloop's).
func BenchmarkUsageTokscale(b *testing.B) {
	ts := tokscaleBin()
	if ts == "" {
		b.Skip("no tokscale: run `make bench-tools` or set LIFELOOP_TOKSCALE to its command (with Bun beside it or on PATH)")
	}
	ll := lifeloopBin(b)
	runs := benchRuns()
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
			for b.Loop() {
				compareUsageTokscale(b, fx, ll, ts, runs)
			}
		})
	}
}

// compareUsageTokscale runs one warm-up pair and runs pairs, and reports.
func compareUsageTokscale(b *testing.B, fx *usageCorpus, ll, ts string, runs int) {
	timeBin := timeBin()
	llEnv := []string{"HOME=" + fx.home, "CLAUDE_CONFIG_DIR=" + fx.configDir, "XDG_CONFIG_HOME=" + filepath.Join(fx.home, "xdg")}
	tsEnv := tokscaleEnv(b, fx.home, ts)
	var llW, llC, tsW, tsC []time.Duration
	var llRSS, tsRSS []int64
	var wallRatio, cpuRatio, rssRatio []float64
	for i := range runs + 1 {
		state := filepath.Join(b.TempDir(), "state")
		a := runWhole(b, timeBin, llEnv, ll, "usage", "--json", "--utc", "--by", "day", "--state-dir", state)
		checkUsageTotals(b, "lifeloop usage", a.out, fx, "total", "input_tokens", "output_tokens", "cache_write_tokens", "cache_read_tokens")
		writeTokscalePrices(b, fx.home)
		t := runWhole(b, timeBin, tsEnv, ts, "models", "--json", "--claude", "--no-spinner")
		checkUsageTotals(b, "tokscale", t.out, fx, "", "totalInput", "totalOutput", "totalCacheWrite", "totalCacheRead")
		if i == 0 {
			continue // warm-up
		}
		llW, llC, llRSS = append(llW, a.wall), append(llC, a.cpu), append(llRSS, a.rssKiB)
		tsW, tsC, tsRSS = append(tsW, t.wall), append(tsC, t.cpu), append(tsRSS, t.rssKiB)
		wallRatio = append(wallRatio, t.wall.Seconds()/a.wall.Seconds())
		cpuRatio = append(cpuRatio, t.cpu.Seconds()/a.cpu.Seconds())
		if a.rssKiB > 0 {
			rssRatio = append(rssRatio, float64(t.rssKiB)/float64(a.rssKiB))
		}
	}
	b.ReportMetric(float64(fx.size)/1e6/median(llW).Seconds(), "MB/s")
	b.ReportMetric(median(llW).Seconds(), "lifeloop-wall-s")
	b.ReportMetric(median(llC).Seconds(), "lifeloop-cpu-s")
	b.ReportMetric(median(tsW).Seconds(), "tokscale-wall-s")
	b.ReportMetric(median(tsC).Seconds(), "tokscale-cpu-s")
	b.ReportMetric(median(wallRatio), "time-vs-lifeloop")
	b.ReportMetric(median(cpuRatio), "cpu-vs-lifeloop")
	if len(rssRatio) > 0 {
		b.ReportMetric(float64(median(llRSS))/1024, "lifeloop-peak-RSS-MiB")
		b.ReportMetric(float64(median(tsRSS))/1024, "tokscale-peak-RSS-MiB")
		b.ReportMetric(median(rssRatio), "rss-vs-lifeloop")
	}
	b.ReportMetric(float64(fx.files), "files")
}

// tokscaleBin is LIFELOOP_TOKSCALE, else the command `make bench-tools`
// installs ("" when neither).
func tokscaleBin() string {
	if p := os.Getenv("LIFELOOP_TOKSCALE"); p != "" {
		return p
	}
	root, err := testharness.FindModuleRoot()
	if err != nil {
		return ""
	}
	p := filepath.Join(root, ".cache", "bench-tools", "tokscale", "node_modules", ".bin", "tokscale")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return ""
}

// tokscaleEnv is tokscale's whole environment: the corpus's home, its
// cache and temporary files under it, and the command's folder (where
// npm put Bun) ahead of PATH.
func tokscaleEnv(b *testing.B, home, ts string) []string {
	tmp := filepath.Join(home, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		b.Fatal(err)
	}
	return []string{
		"HOME=" + home, "XDG_CACHE_HOME=" + filepath.Join(home, "xdg"), "TMPDIR=" + tmp, "NO_COLOR=1",
		"PATH=" + filepath.Dir(ts) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
}

// writeTokscalePrices writes tokscale's two price caches, dated now,
// with the price of claudeGen's model (USD a token, Anthropic's list).
func writeTokscalePrices(b *testing.B, home string) {
	dir := filepath.Join(home, "xdg", "tokscale")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(map[string]any{
		"timestamp": time.Now().Unix(),
		"data": map[string]any{"claude-sonnet-4-5-20250929": map[string]float64{
			"input_cost_per_token": 3e-6, "output_cost_per_token": 15e-6,
			"cache_creation_input_token_cost": 3.75e-6, "cache_read_input_token_cost": 0.3e-6,
		}},
	})
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range []string{"pricing-litellm.json", "pricing-openrouter.json"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
}

// checkUsageTotals fails b unless the JSON report out (its object at key
// obj, or its top level when obj is "") holds the corpus's input,
// output, cache write and cache read totals under the keys given.
func checkUsageTotals(b *testing.B, who string, out []byte, fx *usageCorpus, obj string, keys ...string) {
	b.Helper()
	raw := json.RawMessage(out)
	if obj != "" {
		var top map[string]json.RawMessage
		if err := json.Unmarshal(out, &top); err != nil {
			b.Fatalf("%s printed %.300q: %v", who, out, err)
		}
		raw = top[obj]
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		b.Fatalf("%s printed %.300q: %v", who, out, err)
	}
	want := []int64{fx.input, fx.output, fx.cacheCreation, fx.cacheRead}
	for i, k := range keys {
		var got float64
		_ = json.Unmarshal(fields[k], &got) // absent: 0, a mismatch below
		if int64(got) != want[i] {
			b.Fatalf("%s: %s %d, the corpus holds %d (input %d, output %d, cache creation %d, cache read %d)",
				who, k, int64(got), want[i], fx.input, fx.output, fx.cacheCreation, fx.cacheRead)
		}
	}
}

// runWhole runs argv with exactly env, through /usr/bin/time when timeBin
// names it, and returns its wall and CPU time, peak RSS and stdout.
func runWhole(b *testing.B, timeBin string, env []string, argv ...string) measured {
	b.Helper()
	rssFile := ""
	if timeBin != "" {
		rssFile = filepath.Join(b.TempDir(), "rss")
		argv = append([]string{timeBin, "-q", "-f", "%M", "-o", rssFile}, argv...)
	}
	cmd := exec.CommandContext(b.Context(), argv[0], argv[1:]...)
	cmd.Env = env
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	m := measured{wall: time.Since(start), out: out.Bytes()}
	if err != nil {
		b.Fatalf("%v: %v\nstderr: %.2000s", argv, err, errOut.String())
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if rssFile != "" {
		data, _ := os.ReadFile(rssFile)
		m.rssKiB, _ = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	}
	return m
}
