package procfs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// statLine renders a /proc/<pid>/stat line in the kernel's format with the
// fields the parser reads set and the others plausible.
func statLine(pid int, comm string, state byte, ppid, pgrp, session int, utime, stime uint64, threads int, start uint64, rss int64) string {
	return fmt.Sprintf("%d (%s) %c %d %d %d 34816 %d 4194560 1234 0 5 0 %d %d 0 0 20 0 %d 0 %d 12345678 %d 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		pid, comm, state, ppid, pgrp, session, pgrp, utime, stime, threads, start, rss)
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want ProcStat
	}{
		{
			name: "plain",
			in:   statLine(42, "bash", 'S', 1, 42, 42, 150, 50, 1, 9000, 10),
			want: ProcStat{PID: 42, Comm: "bash", State: 'S', PPid: 1, PGrp: 42, Session: 42,
				UTimeTicks: 150, STimeTicks: 50, CPUSeconds: 2, Threads: 1, StartTicks: 9000, RSSBytes: 40960},
		},
		{
			name: "comm with spaces and parentheses",
			in:   statLine(7, "a) (b c) S 1 2 3", 'R', 6, 7, 5, 1, 2, 4, 1, 3),
			want: ProcStat{PID: 7, Comm: "a) (b c) S 1 2 3", State: 'R', PPid: 6, PGrp: 7, Session: 5,
				UTimeTicks: 1, STimeTicks: 2, CPUSeconds: 0.03, Threads: 4, StartTicks: 1, RSSBytes: 3 * 4096},
		},
		{
			name: "comm with newline and empty comm-like tail",
			in:   statLine(8, "x\ny)", 'Z', 7, 7, 5, 0, 0, 1, 2, 0),
			want: ProcStat{PID: 8, Comm: "x\ny)", State: 'Z', PPid: 7, PGrp: 7, Session: 5, Threads: 1, StartTicks: 2},
		},
		{
			name: "negative rss does not wrap",
			in:   statLine(9, "k", 'I', 2, 0, 0, 0, 0, 1, 5, -1),
			want: ProcStat{PID: 9, Comm: "k", State: 'I', PPid: 2, Threads: 1, StartTicks: 5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in), 4096)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestParseStatMalformed(t *testing.T) {
	good := statLine(42, "bash", 'S', 1, 42, 42, 150, 50, 1, 9000, 10)
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"no comm", "42 bash S 1 42"},
		{"no pid", "(bash) S 1 42 42 0 0 0 0 0 0 0 1 1 0 0 20 0 1 0 1 1 1"},
		{"bad pid", "x (bash) S 1 42 42 0 0 0 0 0 0 0 1 1 0 0 20 0 1 0 1 1 1"},
		{"zero pid", strings.Replace(good, "42 (", "0 (", 1)},
		{"truncated", good[:len(good)/2]},
		{"two-letter state", strings.Replace(good, ") S ", ") SS ", 1)},
		{"bad ppid", strings.Replace(good, ") S 1 ", ") S x ", 1)},
		{"bad utime", strings.Replace(good, " 150 50 ", " -150 50 ", 1)},
		{"bad rss", strings.Replace(good, " 12345678 10 ", " 12345678 ten ", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseStat([]byte(tt.in), 4096); !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestParsePeakRSS(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want uint64
		ok   bool
	}{
		{"present", "Name:\tx\nVmPeak:\t  9999 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n", 2048 * 1024, true},
		{"absent", "Name:\tkthreadd\nState:\tS\n", 0, false},
		{"no unit", "VmHWM:\t2048\n", 0, false},
		{"not a number", "VmHWM:\tlots kB\n", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePeakRSS([]byte(tt.in))
			if (err == nil) != tt.ok || got != tt.want {
				t.Fatalf("got %d, %v; want %d ok=%v", got, err, tt.want, tt.ok)
			}
		})
	}
}

// fakeProc builds a procfs tree in a temp dir.
func fakeProc(t *testing.T, stats []ProcStat, status string) FS {
	t.Helper()
	root := t.TempDir()
	for _, s := range stats {
		dir := filepath.Join(root, strconv.Itoa(s.PID))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		line := statLine(s.PID, s.Comm, s.State, s.PPid, s.PGrp, s.Session, s.UTimeTicks, s.STimeTicks, 1, 1, int64(s.RSSBytes/4096))
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"self", "sys", "1x"} {
		if err := os.Mkdir(filepath.Join(root, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "self", "status"), []byte(status), 0o600); err != nil {
		t.Fatal(err)
	}
	return FS{Root: root, PageSize: 4096}
}

func TestFakeTree(t *testing.T) {
	// 1 init; 10 leader of group 10 → 11 (group 10) → 12 (group 12, own
	// group) → 13 (group 10 again); 20 unrelated in group 20.
	p := func(pid, ppid, pgrp int, rssPages uint64, ticks uint64) ProcStat {
		return ProcStat{PID: pid, Comm: "p " + strconv.Itoa(pid), State: 'S', PPid: ppid, PGrp: pgrp, Session: pgrp,
			UTimeTicks: ticks, STimeTicks: ticks, RSSBytes: rssPages * 4096}
	}
	f := fakeProc(t, []ProcStat{
		p(1, 0, 1, 1, 0),
		p(10, 1, 10, 10, 50),
		p(11, 10, 10, 20, 25),
		p(12, 11, 12, 30, 0),
		p(13, 12, 10, 40, 100),
		p(20, 1, 20, 50, 0),
	}, "VmHWM:\t 512 kB\n")

	t.Run("GroupMembers", func(t *testing.T) {
		got, err := f.GroupMembers(10)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{10, 11, 13}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v want %v", got, want)
		}
		stats, err := f.GroupStats(10)
		if err != nil || len(stats) != 3 || stats[2].PID != 13 || stats[2].RSSBytes != 40*4096 {
			t.Fatalf("GroupStats(10) = %+v, %v", stats, err)
		}
		none, err := f.GroupMembers(99)
		if err != nil || len(none) != 0 {
			t.Fatalf("group 99: %v %v", none, err)
		}
	})
	t.Run("Descendants", func(t *testing.T) {
		got, err := f.Descendants(10)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int{11, 12, 13}; !reflect.DeepEqual(got, want) {
			t.Fatalf("got %v want %v", got, want)
		}
		all, err := f.Scan()
		if err != nil {
			t.Fatal(err)
		}
		if got := DescendantsIn(all, 11); !reflect.DeepEqual(got, []int{12, 13}) {
			t.Fatalf("DescendantsIn(11) = %v", got)
		}
		leaf, err := f.Descendants(13)
		if err != nil || len(leaf) != 0 {
			t.Fatalf("leaf: %v %v", leaf, err)
		}
	})
	t.Run("Sum skips missing", func(t *testing.T) {
		got, err := f.Sum([]int{10, 11, 13, 777})
		if err != nil {
			t.Fatal(err)
		}
		want := Totals{Procs: 3, RSSBytes: 70 * 4096, CPUSeconds: 3.5}
		if got != want {
			t.Fatalf("got %+v want %+v", got, want)
		}
	})
	t.Run("Stat missing", func(t *testing.T) {
		if _, err := f.Stat(777); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("err = %v, want ErrNotExist", err)
		}
	})
	t.Run("SelfPeakRSS", func(t *testing.T) {
		got, err := f.SelfPeakRSS()
		if err != nil || got != 512*1024 {
			t.Fatalf("got %d, %v", got, err)
		}
	})
	t.Run("Scan malformed stat fails", func(t *testing.T) {
		bad := filepath.Join(f.Root, "30")
		if err := os.Mkdir(bad, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bad, "stat"), []byte("30 (x"), 0o600); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(bad)
		if _, err := f.Scan(); !errors.Is(err, ErrMalformed) {
			t.Fatalf("err = %v, want ErrMalformed", err)
		}
	})
}

func TestLiveSelf(t *testing.T) {
	s, err := Stat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.PID != os.Getpid() || s.PPid != os.Getppid() || s.PGrp != syscall.Getpgrp() {
		t.Fatalf("self stat %+v: pid/ppid/pgrp want %d/%d/%d", s, os.Getpid(), os.Getppid(), syscall.Getpgrp())
	}
	if !strings.ContainsRune("RSD", rune(s.State)) || s.Comm != "procfs.test" || s.StartTicks == 0 {
		t.Fatalf("implausible self stat %+v", s)
	}
	if UsageMeasured && (s.RSSBytes == 0 || s.Threads < 1) {
		t.Fatalf("implausible self usage %+v", s)
	}
	if !UsageMeasured && (s.RSSBytes != 0 || s.CPUSeconds != 0) {
		t.Fatalf("usage figures %+v where none are measured", s)
	}
	peak, err := SelfPeakRSS()
	if err != nil {
		t.Fatal(err)
	}
	if peak < s.RSSBytes/2 || peak == 0 {
		t.Fatalf("peak RSS %d below current RSS %d", peak, s.RSSBytes)
	}
}

// startGroup starts `sh -c script` in a process group of its own and
// returns its pid (the group's id) once the script has printed "started";
// the whole group is killed when the test ends.
func startGroup(t *testing.T, script string) int {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	line := make([]byte, len("started\n"))
	if _, err := out.Read(line); err != nil || !bytes.Equal(line, []byte("started\n")) {
		t.Fatalf("read %q: %v", line, err)
	}
	return pgid
}

// TestLiveGroup starts a shell in its own process group with two
// background sleeps and finds all three.
func TestLiveGroup(t *testing.T) {
	pgid := startGroup(t, "sleep 1000 & sleep 1000 & echo started; wait")
	members, err := GroupMembers(pgid)
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 3 || !contains(members, pgid) {
		t.Fatalf("members of %d: %v, want the shell and two sleeps", pgid, members)
	}
	desc, err := Descendants(pgid)
	if err != nil {
		t.Fatal(err)
	}
	if len(desc) != 2 || contains(desc, pgid) {
		t.Fatalf("descendants of %d: %v, want the two sleeps", pgid, desc)
	}
	tot, err := Sum(members)
	if err != nil {
		t.Fatal(err)
	}
	if tot.Procs != 3 || (UsageMeasured && tot.RSSBytes == 0) {
		t.Fatalf("totals %+v", tot)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(statLine(42, "bash", 'S', 1, 42, 42, 150, 50, 1, 9000, 10)))
	f.Add([]byte(statLine(7, "a) (b c) S 1 2 3", 'R', 6, 7, 5, 1, 2, 4, 1, 3)))
	f.Add([]byte("1 () S"))
	f.Add([]byte(")("))
	f.Add([]byte(""))
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStat(b, 4096)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if s.PID <= 0 || s.Comm != string(b[open+1:closing]) {
			t.Fatalf("pid %d comm %q from %q", s.PID, s.Comm, b)
		}
		if s.RSSBytes%4096 != 0 {
			t.Fatalf("rss %d not a whole number of pages", s.RSSBytes)
		}
		if want := float64(s.UTimeTicks+s.STimeTicks) / ClockTicks; s.CPUSeconds != want {
			t.Fatalf("cpu %v want %v", s.CPUSeconds, want)
		}
		// What the parser reads back from its own rendering is the same.
		again, err := ParseStat([]byte(statLine(s.PID, s.Comm, s.State, s.PPid, s.PGrp, s.Session,
			s.UTimeTicks, s.STimeTicks, s.Threads, s.StartTicks, int64(s.RSSBytes/4096))), 4096)
		if isLetter := 'A' <= s.State && s.State <= 'Z' || 'a' <= s.State && s.State <= 'z'; !isLetter {
			return // a state like ')' or a space cannot be re-rendered
		}
		if err != nil {
			t.Fatalf("re-parse of %+v: %v", s, err)
		}
		if again != s {
			t.Fatalf("re-parse %+v != %+v", again, s)
		}
	})
}

// BenchmarkGroupStats is the cost of one supervisor tick's /proc pass.
func BenchmarkGroupStats(b *testing.B) {
	pgid := syscall.Getpgrp()
	for b.Loop() {
		if _, err := GroupStats(pgid); err != nil {
			b.Fatal(err)
		}
	}
}
