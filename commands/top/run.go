package top

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"
)

// coalesce is how long top gathers changes before it redraws: a burst of
// receipts is one redraw.
const coalesce = 50 * time.Millisecond

// fps bounds the renderer's frame rate (its ticker wakes this often while
// top runs; 10 keeps keys responsive and an idle top cheap).
const fps = 10

// RowSource is what the live view shows: a state directory's Source,
// or another source of rows (the fleet's).
type RowSource interface {
	// Rows returns the rows, in the order shown.
	Rows() []Row
	// Watch keeps the rows current until ctx ends, calling changed after
	// each burst of changes (at most once per coalesce).
	Watch(ctx context.Context, coalesce time.Duration, changed func()) error
}

// watchErrMsg says live updates stopped.
type watchErrMsg struct{ err error }

// Interactive runs the full-screen top on in/out until the user quits,
// ctx ends or the process gets SIGINT or SIGTERM. The terminal (raw mode,
// alternate screen, cursor) is restored on every way out, a panic
// included: a panic in the UI is caught by the program, one in the
// watcher kills the program (which restores the terminal) and is
// returned as an error.
func Interactive(ctx context.Context, src RowSource, cfg Config, in io.Reader, out io.Writer, environ []string) error {
	if s, ok := src.(*Source); ok && cfg.Root == "" {
		cfg.Root = s.Root()
	}
	m := NewModel(cfg, src.Rows())
	p := tea.NewProgram(m,
		tea.WithContext(ctx),
		tea.WithInput(in),
		tea.WithOutput(out),
		tea.WithEnvironment(environ),
		tea.WithFPS(fps),
	)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watchDone := make(chan error, 1)
	go func() { // ends with wctx
		var err error
		defer func() {
			if r := recover(); r != nil {
				p.Kill()
				err = fmt.Errorf("top: the rows' watcher panicked: %v", r)
			}
			watchDone <- err
		}()
		err = src.Watch(wctx, coalesce, func() { p.Send(RowsMsg(src.Rows())) })
		if err != nil {
			p.Send(watchErrMsg{err})
		}
	}()
	_, err := p.Run()
	cancel()
	werr := <-watchDone
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil && werr == nil {
		return nil // ctx ended: a normal way out
	}
	if werr != nil && err != nil {
		return werr
	}
	return err
}
