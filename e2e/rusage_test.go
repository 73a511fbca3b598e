package e2e

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// measure makes cmd run through rusagerun (built beside lifeloop), which
// reports the command's own CPU time and peak RSS; call it once cmd's
// ExtraFiles are set, before starting it. After cmd has exited, usage
// returns the CPU time (user + system) and the peak in KiB, the
// children the command waited for included.
//
// Why not cmd.ProcessState's rusage: on Linux a child's ru_maxrss
// includes the resident high-water mark of the memory it execs from,
// and Go starts commands with vfork, so that memory is this process's:
// every peak would be at least the benchmark's own (a /bin/true from a
// test of 100 MiB reports 100 MiB). rusagerun's own peak, which the
// command's is then at least, is about 2 MiB.
func measure(tb testing.TB, cmd *exec.Cmd) (usage func() (time.Duration, int64)) {
	tb.Helper()
	launcher := filepath.Join(filepath.Dir(lifeloopBin(tb)), "rusagerun")
	report := filepath.Join(tb.TempDir(), "rusage")
	nfds := 3 + len(cmd.ExtraFiles)
	cmd.Args = append([]string{launcher, report, strconv.Itoa(nfds), cmd.Path}, cmd.Args...)
	cmd.Path = launcher
	return func() (time.Duration, int64) {
		tb.Helper()
		data, err := os.ReadFile(report)
		if err != nil {
			tb.Fatalf("rusagerun wrote no report (%v): did the command run?", err)
		}
		f := strings.Fields(string(data))
		if len(f) != 2 {
			tb.Fatalf("rusagerun's report %q is not CPU-ns and peak-KiB", data)
		}
		cpu, err1 := strconv.ParseInt(f[0], 10, 64)
		rss, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil {
			tb.Fatalf("rusagerun's report %q is not CPU-ns and peak-KiB", data)
		}
		return time.Duration(cpu), rss
	}
}

// TestMeasureReportsTheCommandsOwnPeak grows this process by 100 MiB,
// then starts /bin/true: wait4 on Linux gives it this process's peak,
// measure gives its own, a few MiB.
func TestMeasureReportsTheCommandsOwnPeak(t *testing.T) {
	skipShort(t)
	if runtime.GOOS != "linux" {
		t.Skip("the inherited peak is Linux's")
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1)")
	}
	ballast := make([]byte, 100<<20)
	for i := range ballast {
		ballast[i] = 1 // touched: resident
	}

	direct := exec.CommandContext(t.Context(), truePath)
	if err := direct.Run(); err != nil {
		t.Fatal(err)
	}
	inherited := direct.ProcessState.SysUsage().(*syscall.Rusage).Maxrss

	cmd := exec.CommandContext(t.Context(), truePath)
	usage := measure(t, cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	_, own := usage()
	runtime.KeepAlive(ballast)
	t.Logf("/bin/true from a process of 100 MiB: peak %d KiB from wait4, %d KiB through measure", inherited, own)
	if inherited < 100<<10 {
		t.Logf("this kernel does not pass the parent's peak on (%d KiB): measure is not needed here, only checked", inherited)
	}
	if own <= 0 || own > 8<<10 {
		t.Fatalf("measure reported a peak of %d KiB for /bin/true; want its own, 0 < peak ≤ 8 MiB", own)
	}
}

// TestMeasurePassesExitCodeAndDescriptors: the command sees cmd's extra
// descriptors, and its exit code is cmd's.
func TestMeasurePassesExitCodeAndDescriptors(t *testing.T) {
	skipShort(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.CommandContext(t.Context(), "sh", "-c", "echo ok >&3; exit 7")
	cmd.ExtraFiles = []*os.File{w}
	usage := measure(t, cmd)
	err = cmd.Run()
	w.Close()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("exit: %v; want exit code 7", err)
	}
	buf := make([]byte, 16)
	n, _ := r.Read(buf)
	if string(buf[:n]) != "ok\n" {
		t.Fatalf("fd 3 got %q; want \"ok\\n\"", buf[:n])
	}
	if _, rss := usage(); rss <= 0 {
		t.Fatalf("peak %d KiB", rss)
	}
}
