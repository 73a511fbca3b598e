package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lifeloop/lifeloop/commands/cli"
	"github.com/lifeloop/lifeloop/commands/cli/topcmd"
	"github.com/lifeloop/lifeloop/commands/otlpcmd"
)

// TestMain lets the test binary double as the programs scripts run:
// lifeloop in-process through Main, with real exit codes, and top's
// terminal UI linked in as lifeloop-top has it; lifeloop-without-top,
// lifeloop as built, which hands `top` to the lifeloop-top program;
// lifeloop-otlp; orgloop-receiver.
//
// Two variables, read only here, let a script pin what a real terminal
// session would vary: LIFELOOP_TEST_TERMINAL=1 makes standard output
// count as a terminal (the human views), LIFELOOP_TEST_NOW=RFC3339 fixes
// the clock (durations and "ago" in those views).
func TestMain(m *testing.M) {
	cmds := map[string]func(){
		"lifeloop": func() {
			os.Exit(topcmd.Main(os.Args, testStreams()))
		},
		"lifeloop-without-top": func() {
			os.Exit(cli.Main(os.Args, testStreams()))
		},
		"orgloop-receiver": cli.OrgLoopReceiverMain,
		"lifeloop-otlp": func() {
			os.Exit(otlpcmd.Main(os.Args, otlpcmd.Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv}))
		},
	}
	if _, isCmd := cmds[filepath.Base(os.Args[0])]; !isCmd {
		moreAtOnce()
	}
	testscript.Main(m, cmds)
}

// moreAtOnce runs scriptsPerCPU parallel tests per processor unless the
// caller set -test.parallel: the scripts mostly wait — for a harness's
// output or idleness, a tick, a file — (about 22 s of processor time in
// 50 s of two processors' wall time), so one per processor, the default,
// leaves the processors idle.
func moreAtOnce() {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(scriptsPerCPU*runtime.GOMAXPROCS(0)))
	}
}

const scriptsPerCPU = 4

// testStreams are the process's streams, with LIFELOOP_TEST_TERMINAL and
// LIFELOOP_TEST_NOW applied.
func testStreams() cli.Streams {
	s := cli.OSStreams()
	if os.Getenv("LIFELOOP_TEST_TERMINAL") == "1" {
		s.OutTerminal = true
	}
	if v := os.Getenv("LIFELOOP_TEST_NOW"); v != "" {
		now, err := time.Parse(time.RFC3339, v)
		if err != nil {
			panic(err)
		}
		s.Now = func() time.Time { return now }
	}
	return s
}
