package cli

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/internal/exitcode"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// discoverEvery is how often `autorenew --all` looks for new sessions.
const discoverEvery = time.Second

// followAllSessions runs one policy per running session of the state
// folder, each on its own goroutine, and starts one for each session that
// appears (the sessions folder read every discoverEvery), until ctx is
// cancelled. A session that ends is dropped; one whose policy fails or
// panics is dropped with a warning, the others go on.
func followAllSessions(ctx context.Context, e *env, o autorenewOptions, cfg autorenew.Config, out *decisionPrinter) error {
	root, err := statedir.Resolve(o.StateDir, e.Getenv)
	if err != nil {
		return exitf(exitcode.Failed, "%v", err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	seen := map[string]bool{}
	tick := time.NewTicker(discoverEvery)
	defer tick.Stop()
	for {
		for _, rec := range newRunningSessions(root, seen) {
			wg.Add(1)
			go func() { // ends when the session ends or ctx is cancelled
				defer wg.Done()
				r := newPolicyRunner(e, root, rec, o, cfg, out)
				if err := r.runGuarded(ctx); err != nil {
					out.warn(rec.ID, err.Error()+"; this session is no longer followed")
				}
			}()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// newRunningSessions returns the sessions of root not yet in seen whose
// wrapper runs, and marks every session it judged (ended ones too) as
// seen; a session folder without its record yet, or one another living
// policy client follows, is looked at again.
func newRunningSessions(root string, seen map[string]bool) []statedir.SessionRecord {
	entries, err := os.ReadDir(statedir.SessionsDir(root))
	if err != nil {
		return nil
	}
	var out []statedir.SessionRecord
	for _, en := range entries {
		id := en.Name()
		if seen[id] || !en.IsDir() || statedir.ValidateSessionID(id) != nil {
			continue
		}
		rec, err := statedir.ReadSession(root, id)
		if err != nil {
			continue
		}
		if _, ok := followedElsewhere(root, id); ok {
			continue // looked at again: that client may stop
		}
		seen[id] = true
		if rec.State.IsTerminal() || statedir.WrapperGone(root, id) {
			continue
		}
		out = append(out, rec)
	}
	return out
}
