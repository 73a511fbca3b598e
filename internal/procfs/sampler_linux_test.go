package procfs

import (
	"slices"
	"testing"
)

func TestSamplerFakeTree(t *testing.T) {
	p := func(pid, ppid, pgrp int, rssPages uint64, ticks uint64) ProcStat {
		return ProcStat{PID: pid, Comm: "p (x) " + string(rune('a'+pid%26)), State: 'S', PPid: ppid, PGrp: pgrp, Session: pgrp,
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
	s := &Sampler{FS: f}
	defer s.Close()
	for range 2 { // the second call reuses the open directory
		var desc []int
		g, err := s.Sample(10, 10, func(pid int) { desc = append(desc, pid) })
		if err != nil {
			t.Fatal(err)
		}
		want := GroupSample{Alive: true, Procs: 3, Usage: true, RSSBytes: 70 * 4096, CPUSeconds: 3.5}
		if g != want {
			t.Fatalf("sample %+v, want %+v", g, want)
		}
		slices.Sort(desc)
		if !slices.Equal(desc, []int{11, 12, 13}) {
			t.Fatalf("descendants %v", desc)
		}
	}
	if g, err := s.Sample(99, 99, nil); err != nil || g != (GroupSample{Usage: true}) {
		t.Fatalf("group 99: %+v %v", g, err)
	}
	// The fake keeps no children lists: every sample is a full pass.
	if s.children >= 0 {
		t.Fatalf("the fake /proc was taken to keep children lists (%d)", s.children)
	}
	n := 0
	count := func(int) { n++ }
	if a := testing.AllocsPerRun(20, func() { _, _ = s.Sample(10, 10, count) }); a >= 1 {
		t.Fatalf("a warm full pass allocates %.1f times", a)
	}
}

// TestSamplerLive checks a sample against GroupStats and Descendants on a
// real process group, and that a warm sample allocates nothing.
func TestSamplerLive(t *testing.T) {
	pgid := startGroup(t, "sleep 1000 & sleep 1000 & echo started; wait")
	var s Sampler
	defer s.Close()
	var desc []int
	g, err := s.Sample(pgid, pgid, func(pid int) { desc = append(desc, pid) })
	if err != nil {
		t.Fatal(err)
	}
	members, err := GroupStats(pgid)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Alive || g.Procs != len(members) || g.Procs != 3 || g.RSSBytes == 0 {
		t.Fatalf("sample %+v, GroupStats %d members", g, len(members))
	}
	want, err := Descendants(pgid)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(desc)
	if !slices.Equal(desc, want) || len(desc) != 2 {
		t.Fatalf("descendants %v, want %v", desc, want)
	}
	n := 0
	count := func(int) { n++ }
	if a := testing.AllocsPerRun(20, func() { _, _ = s.Sample(pgid, pgid, count) }); a >= 1 {
		t.Fatalf("a warm sample allocates %.1f times", a)
	}
}

// TestSamplerWalk: the samples between full passes walk the process tree
// and still count a group member that is no longer a descendant (its
// parent exited), as the full pass does.
func TestSamplerWalk(t *testing.T) {
	pgid := startGroup(t, "(sleep 1000 &); sleep 1000 & echo started; wait")
	want, err := GroupStats(pgid)
	if err != nil || len(want) != 3 {
		t.Fatalf("GroupStats: %d members (%v), want the shell and two sleeps", len(want), err)
	}
	var s Sampler
	defer s.Close()
	for i := range 3 {
		var desc []int
		g, err := s.Sample(pgid, pgid, func(pid int) { desc = append(desc, pid) })
		if err != nil {
			t.Fatal(err)
		}
		if !g.Alive || g.Procs != 3 {
			t.Fatalf("sample %d: %+v, want the 3 members", i, g)
		}
		if len(desc) != 1 {
			t.Fatalf("sample %d: descendants %v, want the one sleep still a child", i, desc)
		}
	}
	if s.children > 0 && s.walks != FullScanEvery-3 {
		t.Fatalf("%d walks left: samples 2 and 3 did not walk", s.walks)
	}
	n := 0
	count := func(int) { n++ }
	if a := testing.AllocsPerRun(20, func() { _, _ = s.Sample(pgid, pgid, count) }); a >= 1 {
		t.Fatalf("a warm walk allocates %.1f times", a)
	}
}
