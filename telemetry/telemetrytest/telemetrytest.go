// Package telemetrytest holds the test helpers that the harness adapters'
// telemetry tests share: a one-line rendering of an observation, a parser
// driver, a Watch runner that waits for observations, the transcript file
// helpers and the check of a real harness turn.
//
// It imports only telemetry and the standard library, so telemetry's own
// (internal) tests cannot use it.
package telemetrytest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/telemetry"
)

// WaitLimit bounds how long a test waits for an event before failing; it
// is a hang guard, not a timing assertion.
const WaitLimit = 15 * time.Second

// TailMode is one of the tailer's ways of noticing appends.
type TailMode struct {
	Name string
	Cfg  telemetry.TailConfig
	Mode telemetry.TailMode
}

// TailModes are the tailer's two ways of noticing appends.
var TailModes = []TailMode{
	{"fsnotify", telemetry.TailConfig{Poll: 10 * time.Millisecond}, telemetry.ModeNotify},
	{"poll", telemetry.TailConfig{Poll: 10 * time.Millisecond, ForcePoll: true}, telemetry.ModePoll},
}

// Summary renders the fields a test cares about.
func Summary(o telemetry.Observation) string {
	s := string(o.Kind)
	if o.FrameID != "" {
		s += " frame=" + o.FrameID
	}
	if o.ParentFrameID != "" {
		s += " parent=" + o.ParentFrameID
	}
	if o.Tokens != 0 || o.Kind == telemetry.ObsUsage {
		s += fmt.Sprintf(" tokens=%d", o.Tokens)
	}
	if o.Window != 0 {
		s += fmt.Sprintf(" window=%d", o.Window)
	}
	if o.Trigger != "" {
		s += " trigger=" + o.Trigger
	}
	if o.PreTokens != 0 || o.PostTokens != 0 {
		s += fmt.Sprintf(" pre=%d post=%d", o.PreTokens, o.PostTokens)
	}
	if o.Kind == telemetry.ObsHarnessSession {
		s += " id=" + o.HarnessSessionID
		if o.Cwd != "" {
			s += " cwd=" + o.Cwd
		}
	}
	if o.Level != "" {
		s += fmt.Sprintf(" level=%s->%s", o.Previous, o.Level)
	}
	return s
}

// ParseAll feeds lines to p as lines 1, 2, … of f.jsonl and returns the
// Summary of every observation and the number of lines p rejected. It
// fails t when an observation names a line other than the one it was
// delivered at (a held-back compaction may name an earlier one).
func ParseAll(t testing.TB, p telemetry.Parser, lines []string) (got []string, errs int) {
	t.Helper()
	var obs []telemetry.Observation
	for i, l := range lines {
		var err error
		n := len(obs)
		obs, err = p.Parse(obs, []byte(l), telemetry.Provenance{Path: "f.jsonl", Line: int64(i + 1), Kind: p.SourceKind()})
		if err != nil {
			errs++
		}
		for _, o := range obs[n:] {
			// A held-back observation (a compaction) keeps the line it
			// came from, which is never a later one.
			if o.Source.Line > int64(i+1) || (o.Kind != telemetry.ObsCompacted && o.Source.Line != int64(i+1)) {
				t.Errorf("observation %s has line %d, delivered at line %d", o.Kind, o.Source.Line, i+1)
			}
		}
	}
	for _, o := range obs {
		got = append(got, Summary(o))
	}
	return got, errs
}

// WatchRun is a telemetry.Watch running for a test; Got holds every
// observation Until has read so far.
type WatchRun struct {
	t   *testing.T
	ch  chan telemetry.Observation
	Got []telemetry.Observation
}

// StartWatch runs telemetry.Watch with cfg until the test ends, then
// stops it and fails t if it returned an error.
func StartWatch(t *testing.T, cfg telemetry.WatchConfig) *WatchRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &WatchRun{t: t, ch: make(chan telemetry.Observation, 4096)}
	done := make(chan error, 1)
	go func() {
		done <- telemetry.Watch(ctx, cfg, func(o telemetry.Observation) {
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

// Until reads observations until ok accepts one and returns it; after
// WaitLimit it fails the test, listing what it saw.
func (r *WatchRun) Until(desc string, ok func(telemetry.Observation) bool) telemetry.Observation {
	r.t.Helper()
	deadline := time.After(WaitLimit)
	for {
		select {
		case o := <-r.ch:
			r.Got = append(r.Got, o)
			if ok(o) {
				return o
			}
		case <-deadline:
			var s []string
			for _, o := range r.Got {
				s = append(s, Summary(o))
			}
			r.t.Fatalf("no %s observation; saw:\n  %s", desc, strings.Join(s, "\n  "))
		}
	}
}

// Kind reads observations until one of kind k.
func (r *WatchRun) Kind(k telemetry.ObsKind) telemetry.Observation {
	r.t.Helper()
	return r.Until(string(k), func(o telemetry.Observation) bool { return o.Kind == k })
}

// LaunchAfter creates the given files, returns a launch time after them,
// and makes sure files created afterwards are born later (file system
// clocks are coarse; the pause orders events, it asserts nothing).
func LaunchAfter(t testing.TB, paths ...string) time.Time {
	t.Helper()
	for _, p := range paths {
		WriteFile(t, p, "{}\n")
	}
	launch := time.Now()
	time.Sleep(30 * time.Millisecond)
	return launch
}

// WriteFile writes body to path, creating its folders.
func WriteFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// AppendFile appends s to path, creating it and its folders.
func AppendFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// CandPaths returns the base names of the candidates' files.
func CandPaths(cs []telemetry.Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, filepath.Base(c.Path))
	}
	return out
}

// RealTurn is what one real harness turn must produce.
type RealTurn struct {
	Name       string
	WantTokens int64
	// WantWindow is the window the usage observations must carry.
	WantWindow int64
	WantLevel  telemetry.Level
}

// CheckRealTurn reads from r the observations of one real harness turn:
// the source found, the harness session, the frame opening and opened,
// usage of want.WantTokens of want.WantWindow in that frame, pressure at
// want.WantLevel and the frame's end, with the end's provenance in the
// file found.
func CheckRealTurn(t *testing.T, r *WatchRun, want RealTurn) {
	t.Helper()
	found := r.Kind(telemetry.ObsSourceFound)
	sess := r.Kind(telemetry.ObsHarnessSession)
	if sess.HarnessSessionID == "" {
		t.Error("no harness session id")
	}
	opening := r.Kind(telemetry.ObsFrameOpening)
	r.Kind(telemetry.ObsFrameOpened)
	u := r.Kind(telemetry.ObsUsage)
	if u.Tokens != want.WantTokens || u.Window != want.WantWindow || u.FrameID != opening.FrameID {
		t.Errorf("usage %s, want %d of %d in frame %s", Summary(u), want.WantTokens, want.WantWindow, opening.FrameID)
	}
	if p := r.Kind(telemetry.ObsPressure); p.Level != want.WantLevel {
		t.Errorf("pressure %s, want %s", Summary(p), want.WantLevel)
	}
	end := r.Kind(telemetry.ObsFrameEnded)
	if end.FrameID != opening.FrameID {
		t.Errorf("frame ended %s, opened %s", end.FrameID, opening.FrameID)
	}
	if end.Source.Path != found.Source.Path || end.Source.Line == 0 {
		t.Errorf("provenance %+v (file %s)", end.Source, found.Source.Path)
	}
	t.Logf("%s: %s session %s, turn %s ended (%s) at line %d", want.Name, filepath.Base(found.Source.Path), sess.HarnessSessionID, end.FrameID, end.Trigger, end.Source.Line)
}
