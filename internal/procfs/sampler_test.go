package procfs

import (
	"os"
	"slices"
	"testing"
)

// FuzzSampledMatchesParseStat: wherever ParseStat reads a stat line, the
// sampler's parser reads the same fields from it.
func FuzzSampledMatchesParseStat(f *testing.F) {
	f.Add([]byte(statLine(42, "bash", 'S', 1, 42, 42, 150, 50, 1, 9000, 10)))
	f.Add([]byte(statLine(7, "a) (b c) S 1 2 3", 'R', 6, 7, 5, 1, 2, 4, 1, 3)))
	f.Add([]byte(statLine(7, "x", 'Z', -1, +7, 5, 1, 2, 4, 1, -3)))
	f.Add([]byte("1 () S"))
	if b, err := os.ReadFile("/proc/self/stat"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		want, err := ParseStat(b, 4096)
		if err != nil {
			return
		}
		got, ok := parseSampled(b, 4096)
		if !ok {
			t.Fatalf("parseSampled refused %q, which ParseStat reads as %+v", b, want)
		}
		w := sampled{pid: want.PID, ppid: want.PPid, pgrp: want.PGrp, threads: want.Threads, state: want.State, rss: want.RSSBytes, cpu: want.CPUSeconds}
		if got != w {
			t.Fatalf("parseSampled %+v, ParseStat %+v from %q", got, w, b)
		}
	})
}

// TestTreeSum: the summing every platform's Sampler shares, on a fake
// process list (1 init; 10 leads group 10 and has 11 (group 10) → 12
// (own group) → 13 (group 10 again); 20 is unrelated; 14 is a zombie
// member).
func TestTreeSum(t *testing.T) {
	p := func(pid, ppid, pgrp int, state byte) sampled {
		return sampled{pid: pid, ppid: ppid, pgrp: pgrp, state: state, rss: uint64(pid) << 12, cpu: float64(pid)}
	}
	tr := tree{procs: []sampled{
		p(1, 0, 1, 'S'), p(10, 1, 10, 'S'), p(11, 10, 10, 'R'), p(12, 11, 12, 'S'),
		p(13, 12, 10, 'S'), p(14, 10, 10, 'Z'), p(20, 1, 20, 'S'),
	}}
	var desc []int
	g := tr.sum(10, 10, func(pid int) { desc = append(desc, pid) }, true)
	want := GroupSample{Alive: true, Procs: 4, Usage: true, RSSBytes: (10 + 11 + 13 + 14) << 12, CPUSeconds: 48}
	if g != want {
		t.Fatalf("sum %+v, want %+v", g, want)
	}
	slices.Sort(desc)
	if !slices.Equal(desc, []int{11, 12, 13, 14}) || !slices.Equal(tr.members, []int{10, 11, 13, 14}) {
		t.Fatalf("descendants %v members %v", desc, tr.members)
	}
	// Without usage figures (macOS) the sums are absent, not made up.
	if g := tr.sum(10, 10, nil, false); g.Usage || g.RSSBytes != 0 || g.CPUSeconds != 0 || g.Procs != 4 || !g.Alive {
		t.Fatalf("sum without usage %+v", g)
	}
	// A group whose leader is a zombie is not alive.
	tr.procs[1].state = 'Z'
	if g := tr.sum(10, 10, nil, true); g.Alive {
		t.Fatalf("zombie leader reported alive: %+v", g)
	}
}
