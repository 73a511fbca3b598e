package launcher

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/watch"
)

// transcriptMoments reads a transcript sample the way both `run` and
// `watch` read one (observe.Start) and returns its moments.
func transcriptMoments(t *testing.T, ad *adapters.Adapter, path string) []Moment {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w, err := observe.Start(ctx, observe.Options{Harness: ad.Telemetry(), Env: []string{"HOME=" + t.TempDir()}, Path: path, FromStart: true, Cwd: t.TempDir(), LaunchedAt: time.Unix(0, 0), Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	var got []Moment
	collected := make(chan struct{})
	go func() { // ends when the watcher closes its channel (cancel below)
		defer close(collected)
		for m := range w.Moments() {
			got = append(got, m)
		}
	}()
	<-w.Sync()
	cancel()
	w.Wait()
	<-collected
	return got
}

// storyLine is a recorded moment as the story tells it: event, frame,
// source, the event of the receipt it links to, the harness session.
func storyLine(m Moment, parentEvent string) string {
	frame := "-"
	if m.Frame != nil {
		frame = m.Frame.FrameID
	}
	return fmt.Sprintf("%s %s %v <- %s hs=%s", m.Event, frame, m.Summary["source"], parentEvent, m.HarnessSessionID)
}

// TestWatchAndRunTellTheSameStory: the same transcript, recorded by `run`
// (the supervisor, its held session.started named by the transcript) and
// by `watch`, gives the same coherent stream of transcript moments: the
// same events, frames, sources, links and harness session. Only what the
// wrapper adds is left out of the comparison (session.starting, the
// session.ended of the process, ticks, its own degradations); run's session.started chains to
// its session.starting, which watch does not have.
func TestWatchAndRunTellTheSameStory(t *testing.T) {
	t.Parallel()
	for _, sample := range []string{"claude-tool-turn.transcript.jsonl", "claude-compact-transcript.jsonl"} {
		t.Run(sample, func(t *testing.T) { sameStory(t, filepath.Join("..", "adapters", "claude", "testdata", sample)) })
	}
}

func sameStory(t *testing.T, sample string) {
	ad := adapters.AdapterOf(claude.Harness{})
	ms := transcriptMoments(t, ad, sample)
	if len(ms) < 3 {
		t.Fatalf("the sample yields %d moments", len(ms))
	}

	// run
	f := newFixture(t, "sleep 0.3")
	f.cfg.Adapter = ad
	f.cfg.Telemetry = &telemetryRunner{ad: ad}
	obs := make(chan Moment, len(ms))
	for _, m := range ms {
		obs <- m
	}
	close(obs)
	f.cfg.Observations = obs
	f.run(t)
	byID := map[string]string{}
	var ran []string
	for i, m := range f.rec.moments {
		byID[fmt.Sprintf("lfr_%d", i+1)] = string(m.Event)
		switch m.Event {
		case contract.EventSessionStarting, contract.EventSessionEnded, contract.EventSupervisorTick:
			continue
		case contract.EventCapabilityDegraded:
			if m.Summary["source"] != "transcript" {
				continue // the wrapper's own (its control socket, the harness's version)
			}
		}
		parent := "-"
		if m.Parent != nil && byID[*m.Parent] != string(contract.EventSessionStarting) {
			parent = byID[*m.Parent]
		}
		ran = append(ran, storyLine(m, parent))
	}

	// watch
	ids := map[string]string{}
	var watched []string
	s := watch.NewStream(ad.Manifest(), time.Now, func(_ context.Context, m Moment) (contract.LifecycleReceipt, error) {
		id := fmt.Sprintf("w%d", len(ids)+1)
		ids[id] = string(m.Event)
		parent := "-"
		if m.Parent != nil {
			parent = ids[*m.Parent]
		}
		watched = append(watched, storyLine(m, parent))
		return contract.LifecycleReceipt{ReceiptID: id}, nil
	}, nil)
	for _, m := range ms {
		s.Observe(context.Background(), m)
	}

	if strings.Join(ran, "\n") != strings.Join(watched, "\n") {
		t.Fatalf("run recorded:\n%s\nwatch recorded:\n%s", strings.Join(ran, "\n"), strings.Join(watched, "\n"))
	}
	t.Logf("both recorded:\n%s", strings.Join(ran, "\n"))
}
