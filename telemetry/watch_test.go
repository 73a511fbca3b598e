package telemetry

import (
	"context"
	"strings"
	"testing"
	"time"
)

type watchRun struct {
	t   *testing.T
	ch  chan Observation
	got []Observation
}

func startWatch(t *testing.T, cfg WatchConfig) *watchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &watchRun{t: t, ch: make(chan Observation, 4096)}
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, cfg, func(o Observation) {
			select {
			case r.ch <- o:
			case <-ctx.Done():
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Watch returned %v", err)
		}
	})
	return r
}

func (r *watchRun) until(desc string, ok func(Observation) bool) Observation {
	r.t.Helper()
	deadline := time.After(waitLimit)
	for {
		select {
		case o := <-r.ch:
			r.got = append(r.got, o)
			if ok(o) {
				return o
			}
		case <-deadline:
			var s []string
			for _, o := range r.got {
				s = append(s, summary(o))
			}
			r.t.Fatalf("no %s observation; saw:\n  %s", desc, strings.Join(s, "\n  "))
		}
	}
}

func (r *watchRun) kind(k ObsKind) Observation {
	r.t.Helper()
	return r.until(string(k), func(o Observation) bool { return o.Kind == k })
}

func TestWatchConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  WatchConfig
	}{
		{"no parser", WatchConfig{Path: "/x"}},
		{"no source", WatchConfig{NewParser: func() Parser { return nopParser{} }}},
		{"bad levels", WatchConfig{Path: "/x", NewParser: func() Parser { return nopParser{} }, Levels: Levels{0.9, 0.5, 0.1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Watch(context.Background(), tc.cfg, func(Observation) {}); err == nil {
				t.Error("Watch accepted the configuration")
			}
		})
	}
}

// nopParser reads nothing from any line.
type nopParser struct{}

func (nopParser) Parse(dst []Observation, _ []byte, _ Provenance) ([]Observation, error) {
	return dst, nil
}

func (nopParser) SourceKind() SourceKind { return SourceTranscript }
