package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
)

// BenchmarkSummary is what `make bench` ends with: one table of lifeloop's
// figures and their ratios to baselines measured in the same run, the
// runs of each comparison alternated (A B A B ...) and medians taken, so
// the ratios hold on a shared, noisy machine even when absolute times do
// not.
//
//   - start-up: `lifeloop run --tick 0 -- true` against `true` and
//     `script -qec true /dev/null` (wall and CPU of the whole process);
//   - relay: 64 MiB of harness output through `lifeloop run` against
//     script(1);
//   - catch-up: `lifeloop watch --until-idle 100ms FILE` on a generated
//     Claude Code transcript and on a generated Codex rollout, at each
//     size of LIFELOOP_BENCH_CATCHUP_MIB (default 64,256); against the
//     native ccusage (`ccusage claude|codex daily`) on the same folder when
//     installed (`make bench-tools`, or LIFELOOP_CCUSAGE_NATIVE);
//   - idle: `lifeloop run --tick 1s -- sleep` for LIFELOOP_BENCH_IDLE
//     (default 20s; the target is stated for 60s), CPU as % of a core;
//   - one-shot prompts: each harness's one-shot prompt under `lifeloop
//     run` against the same prompt bare, and harness exit → lifeloop exit
//     (oneshot_bench_test.go);
//   - TUIs and renewals: each harness's TUI from launch to
//     session.started, its exit to lifeloop's, and renewals (resume,
//     fresh) until the new harness takes keys, LIFELOOP_BENCH_RENEWALS of
//     each (default 3; renew_bench_test.go);
//   - the renewal policy: a person's cost of a policy renewal per
//     harness, and the context it saves on a scripted 30-turn Claude
//     Code session (autorenew_bench_test.go).
//
// Peak RSS is read through /usr/bin/time when it exists: a child started
// by a Go process inherits the parent's RSS in its Maxrss (vfork), the
// child of /usr/bin/time does not. LIFELOOP_BENCH_RUNS sets the runs per
// comparison (default 7).
func BenchmarkSummary(b *testing.B) {
	ll := lifeloopBin(b)
	runs := 7
	if v, err := strconv.Atoi(os.Getenv("LIFELOOP_BENCH_RUNS")); err == nil && v > 0 {
		runs = v
	}
	sizes := catchUpSizes(b)
	idle := 20 * time.Second
	if v := os.Getenv("LIFELOOP_BENCH_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("LIFELOOP_BENCH_IDLE: %v", err)
		}
		idle = d
	}
	for b.Loop() {
		t := &summary{b: b, runs: runs, timeBin: timeBin()}
		state := filepath.Join(b.TempDir(), "state")
		t.startUp(ll, state)
		t.relay(ll, state)
		for _, mib := range sizes {
			t.catchUpClaude(mib)
			t.catchUpCodex(mib)
		}
		t.idle(ll, idle)
		t.oneShots(ll)
		t.renewals()
		t.autorenewals()
		t.print(os.Stdout)
	}
}

// BenchmarkCatchUp prints the catch-up rows of the summary alone, at each
// size of LIFELOOP_BENCH_CATCHUP_MIB, LIFELOOP_BENCH_RUNS alternated runs.
func BenchmarkCatchUp(b *testing.B) {
	lifeloopBin(b)
	sizes := catchUpSizes(b)
	for b.Loop() {
		t := &summary{b: b, runs: benchRuns(), timeBin: timeBin()}
		for _, mib := range sizes {
			t.catchUpClaude(mib)
			t.catchUpCodex(mib)
		}
		t.print(os.Stdout)
	}
}

// catchUpSizes is LIFELOOP_BENCH_CATCHUP_MIB, in MiB (default 64,256).
func catchUpSizes(b *testing.B) []int {
	v := os.Getenv("LIFELOOP_BENCH_CATCHUP_MIB")
	if v == "" {
		return []int{64, 256}
	}
	var sizes []int
	for _, s := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			b.Fatalf("LIFELOOP_BENCH_CATCHUP_MIB: %q is not a size in MiB", s)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// summary collects the table's rows.
type summary struct {
	b       *testing.B
	runs    int
	timeBin string
	rows    [][5]string // measure, lifeloop, baseline, ratio, target
}

func (t *summary) row(measure, ll, base, ratio, target string) {
	t.rows = append(t.rows, [5]string{measure, ll, base, ratio, target})
}

func (t *summary) print(w *os.File) {
	fmt.Fprintf(w, "\nlifeloop benchmark summary — %s, %d cores, %s/%s, %s, medians of %d alternated runs\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, cpuModel(), t.runs)
	head := [5]string{"measure", "lifeloop", "baseline", "ratio (median of pairs)", "target"}
	width := [5]int{}
	for _, r := range append([][5]string{head}, t.rows...) {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(r [5]string) {
		var sb strings.Builder
		sb.WriteString("|")
		for i, c := range r {
			sb.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		fmt.Fprintln(w, sb.String())
	}
	line(head)
	var sep [5]string
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, r := range t.rows {
		line(r)
	}
	fmt.Fprintln(w)
}

// cpuModel is the first "model name" of /proc/cpuinfo.
func cpuModel() string {
	data, _ := os.ReadFile("/proc/cpuinfo")
	for l := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func timeBin() string {
	if _, err := os.Stat("/usr/bin/time"); err == nil {
		return "/usr/bin/time"
	}
	return ""
}

// measured is one whole-process run.
type measured struct {
	wall, cpu time.Duration
	rssKiB    int64 // 0 when unknown
	out       []byte
	end       time.Time // when the process was reaped
}

// measure runs argv with env added, stdout kept, stdin and stderr empty.
func (t *summary) measure(env []string, argv ...string) measured {
	t.b.Helper()
	return t.run(false, env, argv)
}

// measureRSS is measure with the peak RSS, through /usr/bin/time when it
// exists (its fork and exec then count in the time: use it where they
// are small against what is measured).
func (t *summary) measureRSS(env []string, argv ...string) measured {
	t.b.Helper()
	return t.run(true, env, argv)
}

func (t *summary) run(rss bool, env, argv []string) measured {
	t.b.Helper()
	var cmd *exec.Cmd
	rssFile := ""
	if rss && t.timeBin != "" {
		f, err := os.CreateTemp(t.b.TempDir(), "time-")
		if err != nil {
			t.b.Fatal(err)
		}
		rssFile = f.Name()
		f.Close()
		cmd = exec.CommandContext(t.b.Context(), t.timeBin, append([]string{"-q", "-f", "%M", "-o", rssFile}, argv...)...)
	} else {
		cmd = exec.CommandContext(t.b.Context(), argv[0], argv[1:]...)
	}
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		t.b.Fatalf("%v: %v\n%s", argv, err, errOut.String())
	}
	m := measured{wall: wall, out: out.Bytes()}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if rssFile != "" {
		data, _ := os.ReadFile(rssFile)
		m.rssKiB, _ = strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	}
	return m
}

func median[T int64 | float64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// ms prints d in milliseconds, with two decimals under 10 ms.
func ms(d time.Duration) string {
	v := float64(d.Microseconds()) / 1000
	if v < 10 && v > -10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.1f ms", v)
}

func (t *summary) startUp(ll, state string) {
	env := []string{"LIFELOOP_STATE_DIR=" + state}
	scriptOK := true
	if _, err := exec.LookPath("script"); err != nil {
		scriptOK = false
	}
	var llW, llC, trW, scW, scC, verW []time.Duration
	var added, verAdded []time.Duration
	var vsScW, vsScC []float64
	for i := range t.runs + 1 {
		a := t.measure(env, ll, "run", "--tick", "0", "--", "true")
		v := t.measure(env, ll, "version")
		tr := t.measure(nil, "true")
		var sc measured
		if scriptOK {
			sc = t.measure(nil, "script", "-qec", "true", "/dev/null")
		}
		if i == 0 {
			continue // warm-up
		}
		llW, llC, trW = append(llW, a.wall), append(llC, a.cpu), append(trW, tr.wall)
		added = append(added, a.wall-tr.wall)
		verW, verAdded = append(verW, v.wall), append(verAdded, v.wall-tr.wall)
		if scriptOK {
			scW, scC = append(scW, sc.wall), append(scC, sc.cpu)
			vsScW = append(vsScW, a.wall.Seconds()/sc.wall.Seconds())
			vsScC = append(vsScC, a.cpu.Seconds()/max(sc.cpu.Seconds(), 1e-3))
		}
	}
	t.row("run -- true: wall added over `true`", ms(median(llW)), "true "+ms(median(trW)), "+"+ms(median(added)), "≤ +3 ms")
	t.row("of which the binary's start (`lifeloop version`)", ms(median(verW)), "true "+ms(median(trW)), "+"+ms(median(verAdded)), "—")
	if scriptOK {
		t.row("run -- true: wall vs script(1)", ms(median(llW)), "script "+ms(median(scW)), fmt.Sprintf("%.2f×", median(vsScW)), "≤ 0.2×")
		t.row("run -- true: CPU vs script(1)", ms(median(llC)), "script "+ms(median(scC)), fmt.Sprintf("%.2f×", median(vsScC)), "≤ 1×")
	}
}

func (t *summary) relay(ll, state string) {
	if _, err := exec.LookPath("script"); err != nil {
		return
	}
	const size = 64 << 20
	gen := "head -c " + strconv.Itoa(size) + " /dev/zero"
	env := []string{"LIFELOOP_STATE_DIR=" + state}
	var llW, scW []time.Duration
	var ratio []float64
	for i := range t.runs + 1 {
		// Both write to /dev/null, as a terminal that keeps up would take
		// it (the same sh wrapper on both sides).
		a := t.measure(env, "sh", "-c", `exec "$@" >/dev/null`, "sh", ll, "run", "--tick", "0", "--", "sh", "-c", gen)
		s := t.measure(nil, "sh", "-c", `exec "$@" >/dev/null`, "sh", "script", "-qec", gen, "/dev/null")
		if i == 0 {
			continue
		}
		llW, scW = append(llW, a.wall), append(scW, s.wall)
		ratio = append(ratio, a.wall.Seconds()/s.wall.Seconds())
	}
	t.row("relay 64 MiB: wall vs script(1)", ms(median(llW)), "script "+ms(median(scW)), fmt.Sprintf("%.2f×", median(ratio)), "≤ 1.46× (before)")
}

// catchUp times `lifeloop watch` on path, alternated with base (nil: no
// baseline) and adds the row. A baseline whose totals in the warm-up run
// are not the file's gets no ratio: it did not read everything.
func (t *summary) catchUp(name, adapter string, env []string, path string, size int64, base *baseline) {
	var llW, llC, bW, bC []time.Duration
	var rss, bRSS []int64
	var ratio, cpuRatio []float64
	unread := "—"
	for i := range t.runs + 1 {
		state := filepath.Join(t.b.TempDir(), "state")
		a := t.measureRSS(env, lifeloopBin(t.b), "watch", "--state-dir", state, "--adapter", adapter, "--until-idle", "100ms", path)
		if !bytes.Contains(a.out, []byte(`"reason":"idle"`)) {
			t.b.Fatalf("lifeloop watch printed %q", a.out)
		}
		var bm measured
		if base != nil {
			bm = t.measureRSS(env, base.argv...)
		}
		if i == 0 {
			if base != nil {
				if err := base.readAll(bm.out); err != nil {
					t.b.Logf("%s: %v: no ratio for this size", name, err)
					unread, base = base.name+" did not read it all (its totals are not the file's)", nil
				}
			}
			continue
		}
		llW, llC, rss = append(llW, a.wall), append(llC, a.cpu), append(rss, a.rssKiB)
		if base != nil {
			bW, bC, bRSS = append(bW, bm.wall), append(bC, bm.cpu), append(bRSS, bm.rssKiB)
			ratio = append(ratio, bm.wall.Seconds()/a.wall.Seconds())
			cpuRatio = append(cpuRatio, bm.cpu.Seconds()/a.cpu.Seconds())
		}
	}
	mbs := float64(size) / 1e6 / median(llW).Seconds()
	rssText := ""
	if r := median(rss); r > 0 {
		rssText = fmt.Sprintf(", peak %.1f MiB (max %.1f)", float64(r)/1024, float64(slices.Max(rss))/1024)
	}
	llText := fmt.Sprintf("%.0f MB/s, %s, CPU %s%s", mbs, ms(median(llW)), ms(median(llC)), rssText)
	if base == nil {
		t.row(name, llText, unread, "—", "≥ 400 MB/s, peak < 32 MiB")
		return
	}
	baseText := fmt.Sprintf("%s %s, CPU %s, peak %.0f MiB", base.name, ms(median(bW)), ms(median(bC)), float64(median(bRSS))/1024)
	t.row(name, llText, baseText, timesText(median(ratio), "faster", "slower")+", "+timesText(median(cpuRatio), "less CPU", "more CPU"), "≥ 3× faster, ≥ 400 MB/s, peak < 32 MiB")
}

// timesText says r, the baseline's figure over lifeloop's, as "r× better"
// or, below 1, "1/r× worse".
func timesText(r float64, better, worse string) string {
	if r > 0 && r < 1 {
		return fmt.Sprintf("%.1f× %s", 1/r, worse)
	}
	return fmt.Sprintf("%.1f× %s", r, better)
}

func (t *summary) catchUpClaude(mib int) {
	fx := writeCatchUpTranscript(t.b, int64(mib)<<20)
	env := []string{"HOME=" + fx.home, "CLAUDE_CONFIG_DIR=" + fx.configDir}
	var base *baseline
	if c := ccusageBaseline(); c != "" {
		env = append(env, ccusageEnv(fx.home)...)
		base = &baseline{
			name: ccusageName(t.b.Context(), c),
			argv: []string{c, "claude", "daily", "--json", "--offline", "--timezone", "UTC"},
			want: map[string]int64{
				"inputTokens": fx.input, "outputTokens": fx.output,
				"cacheCreationTokens": fx.cacheCreation, "cacheReadTokens": fx.cacheRead,
			},
		}
	}
	t.catchUp(fmt.Sprintf("catch-up, Claude transcript %d MiB (whole run, 100 ms idle included)", mib), "claude", env, fx.path, fx.size, base)
	_ = os.Remove(fx.path)
}

func (t *summary) catchUpCodex(mib int) {
	fx := writeCodexRollout(t.b, int64(mib)<<20)
	env := []string{"HOME=" + fx.home, "CODEX_HOME=" + filepath.Join(fx.home, ".codex")}
	var base *baseline
	if c := ccusageBaseline(); c != "" {
		env = append(env, ccusageEnv(fx.home)...)
		base = &baseline{
			name: ccusageName(t.b.Context(), c),
			argv: []string{c, "codex", "daily", "--json", "--offline", "--timezone", "UTC"},
			want: map[string]int64{"inputTokens": fx.input, "outputTokens": fx.output},
		}
	}
	t.catchUp(fmt.Sprintf("catch-up, Codex rollout %d MiB (whole run, 100 ms idle included)", mib), "codex", env, fx.path, fx.size, base)
	_ = os.Remove(fx.path)
}

// baseline is a peer program run on the same files as lifeloop, and the
// token totals it must report to have read them all.
type baseline struct {
	name string // as the table names it, with its version
	argv []string
	want map[string]int64 // keys of the "totals" object of its JSON
}

// readAll says whether out, the baseline's JSON report, holds the totals
// the files hold.
func (b *baseline) readAll(out []byte) error {
	var rep struct {
		Totals map[string]json.RawMessage `json:"totals"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		return fmt.Errorf("%s printed %.300q: %w", b.name, out, err)
	}
	for k, v := range b.want {
		var got float64
		_ = json.Unmarshal(rep.Totals[k], &got) // absent: 0, a mismatch
		if int64(got) != v {
			return fmt.Errorf("%s totals %s %d, want %d", b.name, k, int64(got), v)
		}
	}
	return nil
}

// ccusageBaseline is the native ccusage binary to compare with:
// LIFELOOP_CCUSAGE_NATIVE, else this platform's package as `make
// bench-tools` installs it ("" when neither).
func ccusageBaseline() string {
	if p := os.Getenv("LIFELOOP_CCUSAGE_NATIVE"); p != "" {
		return p
	}
	root, err := testharness.FindModuleRoot()
	if err != nil {
		return ""
	}
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	p := filepath.Join(root, ".cache", "bench-tools", "ccusage-native", "node_modules", "@ccusage",
		"ccusage-"+runtime.GOOS+"-"+arch, "bin", "ccusage")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
		return p
	}
	return ""
}

// ccusageEnv keeps ccusage's configuration and cache in the test's home,
// its output without color.
func ccusageEnv(home string) []string {
	x := filepath.Join(home, "xdg")
	return []string{"XDG_CONFIG_HOME=" + x, "XDG_CACHE_HOME=" + x, "NO_COLOR=1"}
}

// ccusageName is "ccusage <version>" as bin reports it.
func ccusageName(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "--version").Output()
	if v := strings.TrimPrefix(strings.TrimSpace(string(out)), "ccusage "); err == nil && v != "" {
		return "ccusage " + v
	}
	return "ccusage"
}

// codexFixture is a generated Codex home with one large rollout, and the
// token totals it holds.
type codexFixture struct {
	home, path    string
	size          int64
	input, output int64
}

// lineHead is the time and ordinal each rollout line starts with.
var lineHead = regexp.MustCompile(`^\{"timestamp":"([^"]+)","ordinal":(\d+),`)

// laterTurn moves a line of the sample's turn to its repeat number turn:
// 3 s and one turn's ordinals later for each (the sample's turn takes 2.4
// s), as Codex writes turn after turn. A reader that drops an event it
// has seen at the same time would count a repeat at the same time once.
func laterTurn(l string, turn, lines int64) string {
	m := lineHead.FindStringSubmatchIndex(l)
	if m == nil {
		return l
	}
	at, err := time.Parse(time.RFC3339Nano, l[m[2]:m[3]])
	if err != nil {
		return l
	}
	ord, _ := strconv.ParseInt(l[m[4]:m[5]], 10, 64)
	return fmt.Sprintf(`{"timestamp":"%s","ordinal":%d,`, at.Add(time.Duration(turn)*3*time.Second).UTC().Format("2006-01-02T15:04:05.000Z"), ord+turn*lines) + l[m[1]:]
}

// totalUsage is the cumulative usage object of a token_count line.
var totalUsage = regexp.MustCompile(`"total_token_usage":\{"input_tokens":(\d+),"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":(\d+),"reasoning_output_tokens":0,"total_tokens":(\d+)\}`)

// writeCodexRollout streams a rollout of at least size bytes into
// <home>/.codex/sessions/: the session_meta of the bundled real rollout,
// then its turn over and over, each repeat later in time and ordinals,
// the cumulative token totals of its token_count lines carried on from
// turn to turn as Codex 0.169 writes them.
func writeCodexRollout(b *testing.B, size int64) *codexFixture {
	b.Helper()
	root, err := testharness.FindModuleRoot()
	if err != nil {
		b.Fatal(err)
	}
	sample, err := os.ReadFile(filepath.Join(root, "adapters", "codex", "testdata", "codex-tool-turn.rollout.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimRight(string(sample), "\n"), "\n")
	if len(lines) < 2 || !strings.Contains(lines[0], `"session_meta"`) {
		b.Fatal("the bundled rollout does not start with its session_meta")
	}
	// What one turn adds: the last cumulative totals of the sample.
	var turnIn, turnOut, turnTotal int64
	for _, l := range lines[1:] {
		if m := totalUsage.FindStringSubmatch(l); m != nil {
			turnIn, _ = strconv.ParseInt(m[1], 10, 64)
			turnOut, _ = strconv.ParseInt(m[2], 10, 64)
			turnTotal, _ = strconv.ParseInt(m[3], 10, 64)
		}
	}
	if turnTotal == 0 {
		b.Fatal("the bundled rollout has no token_count line")
	}
	fx := &codexFixture{home: filepath.Join(b.TempDir(), "home")}
	dir := filepath.Join(fx.home, ".codex", "sessions", "2026", "11", "21")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	fx.path = filepath.Join(dir, "rollout-2026-11-21T22-12-19-01a2002a-de7b-7c00-8000-00000000be4c.jsonl")
	f, err := os.Create(fx.path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, _ := w.WriteString(lines[0])
	fx.size = int64(n)
	for turn := int64(0); fx.size < size; turn++ {
		for _, l := range lines[1:] {
			if turn > 0 {
				l = laterTurn(l, turn, int64(len(lines)-1))
				l = totalUsage.ReplaceAllStringFunc(l, func(u string) string {
					m := totalUsage.FindStringSubmatch(u)
					in, _ := strconv.ParseInt(m[1], 10, 64)
					out, _ := strconv.ParseInt(m[2], 10, 64)
					tot, _ := strconv.ParseInt(m[3], 10, 64)
					return fmt.Sprintf(`"total_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":%d,"reasoning_output_tokens":0,"total_tokens":%d}`,
						in+turn*turnIn, out+turn*turnOut, tot+turn*turnTotal)
				})
			}
			if !strings.HasSuffix(l, "\n") {
				l += "\n"
			}
			n, _ := w.WriteString(l)
			fx.size += int64(n)
		}
		fx.input += turnIn
		fx.output += turnOut
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return fx
}

func (t *summary) idle(ll string, d time.Duration) {
	state := filepath.Join(t.b.TempDir(), "state")
	m := t.measureRSS([]string{"LIFELOOP_STATE_DIR=" + state}, ll, "run", "--tick", "1s", "--", "sleep", strconv.FormatFloat(d.Seconds(), 'f', 0, 64))
	pct := 100 * m.cpu.Seconds() / d.Seconds()
	t.row(fmt.Sprintf("idle --tick 1s, %s (start and exit included)", d), fmt.Sprintf("%.3f %% of a core, CPU %s, peak %.1f MiB", pct, ms(m.cpu), float64(m.rssKiB)/1024), "—", "—", "< 0.1 % of a core")
}
