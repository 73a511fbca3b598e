package telemetry

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// noEvents never learns of a change by itself: no fsnotify, a poll an
// hour away. Only a sync reads.
var noEvents = TailConfig{ForcePoll: true, Poll: time.Hour, SafetyPoll: time.Hour}

// sync sends one sync to syncs and waits for its answer, then returns
// what the sink had received by then.
func (r *watchRun) sync(syncs chan<- func()) []Observation {
	r.t.Helper()
	answered := make(chan struct{})
	select {
	case syncs <- func() { close(answered) }:
	case <-time.After(waitLimit):
		r.t.Fatal("the watcher took no sync")
	}
	select {
	case <-answered:
	case <-time.After(waitLimit):
		r.t.Fatal("the sync was never answered")
	}
	var got []Observation
	for {
		select {
		case o := <-r.ch:
			r.got = append(r.got, o)
			got = append(got, o)
		default:
			return got
		}
	}
}

func count(obs []Observation, k ObsKind) int {
	n := 0
	for _, o := range obs {
		if o.Kind == k {
			n++
		}
	}
	return n
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWatchSyncReadsWhatNoEventAnnounced: lines written just before a
// sync are handed to the sink before the sync is answered, though no
// file event or poll reported them (the last lines a harness writes as it
// exits).
func TestWatchSyncReadsWhatNoEventAnnounced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	appendLines(t, path, `{"n":1}`)
	syncs := make(chan func())
	tc := noEvents
	tc.FromStart = true
	r := startWatch(t, WatchConfig{Path: path, NewParser: func() Parser { return echoParser{} }, Tail: tc, Syncs: syncs})
	r.kind(ObsSourceMode)
	appendLines(t, path, `{"n":2}`, `{"n":3}`)
	r.sync(syncs)
	if n := count(r.got, ObsUsage); n != 3 {
		t.Fatalf("%d lines read by the sync's answer, want 3: %v", n, r.got)
	}
	// A second sync with nothing new answers too, and reads nothing.
	appendLines(t, path, `{"n":4}`)
	if got := r.sync(syncs); count(got, ObsUsage) != 1 {
		t.Errorf("second sync read %v, want the one new line", got)
	}
	if got := r.sync(syncs); len(got) != 0 {
		t.Errorf("a sync with nothing new read %v", got)
	}
}

// dirFiles is a Discoverer of the *.jsonl files of one folder.
type dirFiles struct{ dir string }

func (d dirFiles) Roots() []string        { return []string{d.dir} }
func (d dirFiles) SourceKind() SourceKind { return SourceTranscript }
func (d dirFiles) Candidates() ([]Candidate, error) {
	paths, err := filepath.Glob(filepath.Join(d.dir, "*.jsonl"))
	var out []Candidate
	for _, p := range paths {
		born, _ := BornAt(p)
		out = append(out, Candidate{Path: p, Born: born})
	}
	SortCandidates(out)
	return out, err
}

// TestWatchSyncDiscovers: a sync before the harness wrote its file is
// answered at once with nothing; one after it finds the file and reads it
// before answering, with no folder event or poll.
func TestWatchSyncDiscovers(t *testing.T) {
	dir := t.TempDir()
	syncs := make(chan func())
	r := startWatch(t, WatchConfig{Discoverer: dirFiles{dir}, NewParser: func() Parser { return echoParser{} }, Within: time.Hour, Tail: noEvents, Syncs: syncs})
	if got := r.sync(syncs); len(got) != 0 {
		t.Fatalf("a sync before any file read %v", got)
	}
	path := filepath.Join(dir, "s.jsonl")
	appendLines(t, path, `{"n":1}`, `{"n":2}`)
	got := r.sync(syncs)
	if count(got, ObsSourceFound) != 1 || count(got, ObsUsage) != 2 {
		t.Fatalf("the sync after the file was written read %v, want the file found and its 2 lines", got)
	}
}

// TestWatchSyncFollowsANewerFile: with Follow, a sync switches to a newer
// file nothing announced and reads it before answering.
func TestWatchSyncFollowsANewerFile(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a.jsonl")
	appendLines(t, first, `{"n":1}`)
	syncs := make(chan func())
	r := startWatch(t, WatchConfig{Discoverer: dirFiles{dir}, Follow: true, NewParser: func() Parser { return echoParser{} }, Within: time.Hour, Tail: noEvents, Syncs: syncs})
	r.kind(ObsUsage)
	time.Sleep(20 * time.Millisecond) // a birth time after the first file's
	appendLines(t, filepath.Join(dir, "b.jsonl"), `{"n":2}`, `{"n":3}`)
	got := r.sync(syncs)
	if count(got, ObsSourceFound) != 1 || count(got, ObsUsage) != 2 {
		t.Fatalf("the sync after a newer file was written read %v, want it found and its 2 lines", got)
	}
}
