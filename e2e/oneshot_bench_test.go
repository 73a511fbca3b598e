package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// oneShot is a harness's one-shot prompt, as orchestrators run it.
type oneShot struct {
	name string
	bin  func(testing.TB) string
	args []string
	// home, when set, prepares the harness's HOME before the runs, and
	// note says how in the rows' names.
	home func(testing.TB, *testharness.HarnessEnv)
	note string
}

// oneShots are the five harnesses' one-shot prompts against the mock.
var oneShots = []oneShot{
	{name: "claude", bin: testharness.ClaudeBin, args: []string{"-p", "hi"}},
	{name: "codex", bin: testharness.CodexBin, args: []string{"exec", "--skip-git-repo-check", "hi"}},
	{name: "gemini", bin: testharness.GeminiBin, args: geminiArgs("hi")},
	{name: "opencode", bin: testharness.OpenCodeBin, args: []string{"run", "hi"}},
	{name: "pi", bin: testharness.PiBin, args: []string{"-p", "hi"}},
}

// claudeWithSettings is Claude Code's one-shot in a HOME that has a user
// settings file (~/.claude/settings.json, here {}), as one that was ever
// configured has. Claude pays once for the first settings source it reads
// (4-7% of this one-shot's processor time here), and lifeloop's hooks
// come to it through --settings: in a HOME without a settings file the
// plain row counts that price as lifeloop's, this one does not.
var claudeWithSettings = oneShot{
	name: "claude", bin: testharness.ClaudeBin, args: []string{"-p", "hi"},
	note: "with a user settings file",
	home: func(tb testing.TB, env *testharness.HarnessEnv) {
		tb.Helper()
		if err := os.WriteFile(filepath.Join(env.Home, ".claude", "settings.json"), []byte("{}\n"), 0o600); err != nil {
			tb.Fatal(err)
		}
	},
}

// BenchmarkOneShot prints the one-shot rows of the summary alone:
// LIFELOOP_BENCH_HARNESSES (comma-separated, default all five) picks the
// harnesses, LIFELOOP_BENCH_RUNS the alternated pairs, and
// LIFELOOP_BENCH_RUN_FLAGS (space-separated) adds flags to `lifeloop run`
// (e.g. --no-hooks --no-telemetry, to tell their share apart).
func BenchmarkOneShot(b *testing.B) {
	ll := lifeloopBin(b)
	for b.Loop() {
		t := &summary{b: b, runs: benchRuns()}
		t.oneShots(ll)
		t.print(os.Stdout)
	}
}

// oneShots adds a row per harness: its one-shot prompt under `lifeloop
// run` (hooks and telemetry on, the defaults) against the same prompt
// bare, alternated pairs in one environment, median wall and CPU ratios;
// the same prompt under script(1) against bare in the same runs (what
// any wrapper that gives the harness a terminal pays: a harness may
// behave differently on one); and the time from the harness's exit to
// lifeloop's.
func (t *summary) oneShots(ll string) {
	pick := os.Getenv("LIFELOOP_BENCH_HARNESSES")
	for _, h := range slices.Insert(slices.Clone(oneShots), 1, claudeWithSettings) {
		if pick != "" && !slices.Contains(strings.Split(pick, ","), h.name) {
			continue
		}
		t.oneShot(ll, h)
	}
}

func (t *summary) oneShot(ll string, h oneShot) {
	b := t.b
	bin := h.bin(b)
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "hello"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = mock.Close() }()
	env := testharness.NewHarnessEnv(b, mock)
	env.UseNodeFor(b, bin)
	if h.home != nil {
		h.home(b, env)
	}
	state := filepath.Join(b.TempDir(), "state")
	stand, marks := exitMarker(b, bin, filepath.Base(bin))
	_, scriptErr := exec.LookPath("script")
	var bareW, llW, bareC, llC, scW, tail []time.Duration
	var wall, cpu, scWall, scCPU []float64
	for i := range t.runs + 1 {
		bare := t.harnessRun(env, bin, h.args...)
		wrapped := t.harnessRun(env, ll, append(runArgs(state, bin), h.args...)...)
		var sc measured
		if scriptErr == nil {
			sc = t.harnessRun(env, "script", "-qec", shellWords(bin, h.args), "/dev/null")
		}
		if i == 0 {
			continue // warm-up
		}
		bareW, llW = append(bareW, bare.wall), append(llW, wrapped.wall)
		bareC, llC = append(bareC, bare.cpu), append(llC, wrapped.cpu)
		wall = append(wall, wrapped.wall.Seconds()/bare.wall.Seconds())
		cpu = append(cpu, wrapped.cpu.Seconds()/max(bare.cpu.Seconds(), 1e-3))
		if scriptErr == nil {
			scW = append(scW, sc.wall)
			scWall = append(scWall, sc.wall.Seconds()/bare.wall.Seconds())
			scCPU = append(scCPU, sc.cpu.Seconds()/max(bare.cpu.Seconds(), 1e-3))
		}
		marked := t.harnessRun(env, ll, append(runArgs(state, stand), h.args...)...)
		if at, ok := lastMark(marks); ok {
			tail = append(tail, marked.end.Sub(at))
		}
	}
	cmd := strings.Join(append([]string{h.name}, h.args...), " ")
	if h.note != "" {
		cmd += " (" + h.note + ")"
	}
	t.row(cmd+": wall", ms(median(llW)), "bare "+ms(median(bareW)), fmt.Sprintf("%.2f×", median(wall)), "≤ 1.05×")
	t.row(cmd+": CPU", ms(median(llC)), "bare "+ms(median(bareC)), fmt.Sprintf("%.2f×", median(cpu)), "≤ 1.10×")
	if len(scW) > 0 {
		t.row(cmd+": under script(1), wall and CPU", ms(median(scW)), "bare "+ms(median(bareW)), fmt.Sprintf("%.2f×, CPU %.2f×", median(scWall), median(scCPU)), "—")
	}
	if len(tail) > 0 {
		t.row(h.name+": harness exit → lifeloop exit", ms(median(tail)), "—", "—", "< 20 ms")
	}
}

// harnessRun runs argv in env (its folder, its own process group), stdin
// from /dev/null, and measures it.
func (t *summary) harnessRun(env *testharness.HarnessEnv, bin string, args ...string) measured {
	t.b.Helper()
	cmd := env.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err := cmd.Run()
	end := time.Now()
	if err != nil {
		t.b.Fatalf("%s %v: %v\n%s", bin, args, err, errOut.String())
	}
	m := measured{wall: end.Sub(start), out: out.Bytes(), end: end}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		m.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return m
}

// exitMarker writes a stand-in for bin, named like it (so lifeloop
// takes it for the same harness): it runs bin and, once bin has exited,
// appends the time in nanoseconds to the returned file. A `--version`
// call (lifeloop reads the harness's version) marks nothing.
func exitMarker(b testing.TB, bin, name string) (stand, marks string) {
	dir := b.TempDir()
	stand, marks = filepath.Join(dir, name), filepath.Join(dir, "exits")
	script := "#!/bin/sh\n\"" + bin + "\" \"$@\"\nrc=$?\n" +
		"case \" $* \" in *\" --version \"*) ;; *) date +%s%N >>\"" + marks + "\" ;; esac\nexit $rc\n"
	if err := os.WriteFile(stand, []byte(script), 0o755); err != nil {
		b.Fatal(err)
	}
	return stand, marks
}

// runArgs is `lifeloop run` of bin, with LIFELOOP_BENCH_RUN_FLAGS.
func runArgs(state, bin string) []string {
	args := append([]string{"run", "--state-dir", state}, strings.Fields(os.Getenv("LIFELOOP_BENCH_RUN_FLAGS"))...)
	return append(args, "--", bin)
}

// shellWords is bin and args as one command line for sh -c.
func shellWords(bin string, args []string) string {
	q := []string{hooks.ShellQuote(bin)}
	for _, a := range args {
		q = append(q, hooks.ShellQuote(a))
	}
	return strings.Join(q, " ")
}

// lastMark is the newest time exitMarker appended to marks.
func lastMark(marks string) (time.Time, bool) {
	data, err := os.ReadFile(marks)
	if err != nil {
		return time.Time{}, false
	}
	lines := strings.Fields(string(data))
	if len(lines) == 0 {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(lines[len(lines)-1], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// benchRuns is LIFELOOP_BENCH_RUNS, default 7.
func benchRuns() int {
	if v, err := strconv.Atoi(os.Getenv("LIFELOOP_BENCH_RUNS")); err == nil && v > 0 {
		return v
	}
	return 7
}
