// Command mockmodel runs the loopback mock model server for manual use and
// for scripts/demo.sh: it prints its base URL on the first line of stdout
// and serves until SIGINT or SIGTERM.
//
//	mockmodel [-addr 127.0.0.1:0] [-reply TEXT] [-input-tokens N] [-output-tokens N] [-v] [-log-bodies FILE]
package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mockmodel", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "loopback listen address")
	reply := fs.String("reply", mockmodel.DefaultReply, "text of a plain answer")
	in := fs.Int("input-tokens", mockmodel.DefaultUsage.InputTokens, "input tokens reported per response")
	out := fs.Int("output-tokens", mockmodel.DefaultUsage.OutputTokens, "output tokens reported per response")
	verbose := fs.Bool("v", false, "log one line per request to stderr")
	bodies := fs.String("log-bodies", "", "append one JSON line per request, with its body, to `FILE` (0600): where a payload or prompt landed")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg := mockmodel.Config{Addr: *addr, Reply: *reply, Usage: mockmodel.Usage{InputTokens: *in, OutputTokens: *out}}
	if *bodies != "" {
		f, err := os.OpenFile(*bodies, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "mockmodel: -log-bodies: %v\n", err)
			return 1
		}
		defer f.Close()
		cfg.BodyLog = f
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := mockmodel.Start(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fmt.Fprintln(stdout, srv.URL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	<-sig
	if err := srv.Close(); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
