// Package topcmd is the terminal UI half of `lifeloop top`: it opens
// commands/top for what the CLI resolved (cli.TopUI). It is linked only
// into the lifeloop-top program, so lifeloop, which runs on every
// harness start, never links or initialises the terminal UI libraries;
// `lifeloop top` hands the live view over to lifeloop-top (--once and
// --json it prints itself, through commands/topview).
package topcmd

import (
	"context"
	"os"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/commands/cli"
	"github.com/lifeloop/lifeloop/commands/top"
	"github.com/lifeloop/lifeloop/commands/topview"
)

// Main runs lifeloop with top's terminal UI: the lifeloop-top program.
func Main(args []string, s cli.Streams) int { return cli.MainWithTop(args, s, Open) }

// Open reads the sessions of p.Root (an ended session only within
// topview.DefaultRecent, unless p.All) and returns top's view of them.
func Open(p cli.TopParams) (cli.TopView, error) {
	if p.Rows != nil {
		cfg := top.Config{
			Home: p.Home, Now: p.Now, All: p.All, Clock: time.Second, Where: p.Where,
			Actions: p.Actions, ReceiptLine: p.ReceiptLine, Getenv: envLookup(p.Environ),
		}
		return &view{src: p.Rows, cfg: cfg, environ: p.Environ}, nil
	}
	var since time.Time
	if !p.All {
		since = p.Now().Add(-topview.DefaultRecent)
	}
	src, err := topview.OpenWith(p.Root, since, p.Sealer)
	if err != nil {
		return nil, err
	}
	cfg := top.Config{
		Root: p.Root, Home: p.Home, Now: p.Now, All: p.All, Clock: time.Second,
		Actions: p.Actions, ReceiptLine: p.ReceiptLine, Getenv: envLookup(p.Environ),
	}
	if p.External != nil {
		return &view{src: topview.WithExternal(src, p.External, topview.ExternalCheck, topview.ExternalRefresh), cfg: cfg, environ: p.Environ}, nil
	}
	return &view{src: src, cfg: cfg, environ: p.Environ}, nil
}

type view struct {
	src     top.RowSource
	cfg     top.Config
	environ []string
}

// Problems are those of a state directory's sessions (none for other
// rows).
func (v *view) Problems() map[string]string {
	if s, ok := v.src.(interface{ Problems() map[string]string }); ok {
		return s.Problems()
	}
	return nil
}

func (v *view) Interactive(ctx context.Context, in, out *os.File) error {
	return top.Interactive(ctx, v.src, v.cfg, in, out, v.environ)
}

// envLookup reads a variable of environ (the last value wins).
func envLookup(environ []string) func(string) string {
	return func(name string) string {
		v := ""
		for _, kv := range environ {
			if k, val, ok := strings.Cut(kv, "="); ok && k == name {
				v = val
			}
		}
		return v
	}
}
