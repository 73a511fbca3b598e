// Package topcmd is the terminal UI half of `lifeloop top`: it opens
// internal/top for what the CLI resolved (cli.TopUI). It is linked only
// into the lifeloop-top program, so lifeloop, which runs on every
// harness start, never links or initialises the terminal UI libraries;
// `lifeloop top` hands over to lifeloop-top.
package topcmd

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/charmbracelet/colorprofile"

	"github.com/lifeloop/lifeloop/internal/cli"
	"github.com/lifeloop/lifeloop/internal/top"
)

// Main runs lifeloop with top's terminal UI: the lifeloop-top program.
func Main(args []string, s cli.Streams) int { return cli.MainWithTop(args, s, Open) }

// Open reads the sessions of p.Root (an ended session only within
// top.DefaultRecent, unless p.All) and returns top's view of them.
func Open(p cli.TopParams) (cli.TopView, error) {
	var since time.Time
	if !p.All {
		since = p.Now().Add(-top.DefaultRecent)
	}
	src, err := top.OpenWith(p.Root, since, p.Sealer)
	if err != nil {
		return nil, err
	}
	cfg := top.Config{
		Root: p.Root, Home: p.Home, Now: p.Now, All: p.All, Clock: time.Second,
		Actions: p.Actions, ReceiptLine: p.ReceiptLine,
	}
	return &view{src: src, cfg: cfg, environ: p.Environ}, nil
}

type view struct {
	src     *top.Source
	cfg     top.Config
	environ []string
}

func (v *view) Problems() map[string]string { return v.src.Problems() }

func (v *view) rows() []top.Row { return top.NewModel(v.cfg, v.src.Rows()).Rows() }

func (v *view) Rows() any {
	if rows := v.rows(); rows != nil {
		return rows
	}
	return []top.Row{}
}

func (v *view) WriteTable(w io.Writer, width int) error {
	_, err := colorprofile.NewWriter(w, v.environ).WriteString(top.Once(v.rows(), v.cfg.Now(), width, v.cfg.Root, v.cfg.Home))
	return err
}

func (v *view) Interactive(ctx context.Context, in, out *os.File) error {
	return top.Interactive(ctx, v.src, v.cfg, in, out, v.environ)
}
