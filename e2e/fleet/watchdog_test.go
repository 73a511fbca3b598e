package fleet

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// watchdogAfter bounds the whole package's run (about 2 minutes on an
// idle machine, at most 15 on a loaded one): a test still running then
// is stuck.
const watchdogAfter = 30 * time.Minute

// startWatchdog fails the run after d with what a reader of the
// output's last lines needs: every goroutine's stack first, then the
// tail of the broker's log and, last, the stacks that run this
// package's code (the stuck test's own). It stops the broker before it
// exits. The returned function disarms it.
func startWatchdog(d time.Duration) func() {
	t := time.AfterFunc(d, func() {
		buf := make([]byte, 64<<20)
		buf = buf[:runtime.Stack(buf, true)]
		os.Stderr.Write(buf)
		fmt.Fprintf(os.Stderr, "\n=== the fleet tests still run after %s\n", d)
		if broker != nil {
			logs, _ := filepath.Glob(filepath.Join(broker.Dir, "log", "*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				lines := strings.Split(strings.TrimSpace(string(b)), "\n")
				fmt.Fprintf(os.Stderr, "=== the broker's log %s, last lines:\n%s\n", filepath.Base(l), strings.Join(lines[max(0, len(lines)-25):], "\n"))
			}
		}
		fmt.Fprintln(os.Stderr, "=== goroutines in the fleet tests' code, alike ones once, the tests' own last:")
		var tests []string
		seen := map[string]int{}
		var order []string
		for _, g := range strings.Split(string(buf), "\n\n") {
			if !strings.Contains(g, "lifeloop/e2e/fleet.") || strings.Contains(g, "startWatchdog") {
				continue
			}
			if strings.Contains(g, "testing.tRunner") {
				tests = append(tests, g)
				continue
			}
			k := shape(g)
			if seen[k] == 0 {
				order = append(order, k)
			}
			seen[k]++
		}
		for _, k := range order {
			fmt.Fprintf(os.Stderr, "%d goroutine(s):\n%s\n\n", seen[k], k)
		}
		for _, g := range tests {
			fmt.Fprintf(os.Stderr, "%s\n\n", g)
		}
		if broker != nil {
			broker.Close()
		}
		os.Exit(2)
	})
	return func() { t.Stop() }
}

// shape is a goroutine's stack without its id, wait time, arguments and
// offsets: alike goroutines have one shape.
func shape(g string) string {
	var out []string
	for i, l := range strings.Split(g, "\n") {
		switch {
		case i == 0:
			if a, b := strings.Index(l, "["), strings.Index(l, "]"); a >= 0 && b > a {
				st, _, _ := strings.Cut(l[a+1:b], ",")
				l = "[" + st + "]"
			}
		case strings.HasPrefix(l, "\t"):
			l, _, _ = strings.Cut(l, " +0x")
		case strings.HasPrefix(l, "created by "):
			l, _, _ = strings.Cut(l, " in goroutine")
		default:
			if j := strings.LastIndex(l, "("); j > 0 {
				l = l[:j]
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
