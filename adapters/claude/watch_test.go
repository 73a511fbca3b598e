package claude_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

func TestWatchClaudeSession(t *testing.T) {
	for _, m := range telemetrytest.TailModes {
		t.Run(m.Name, func(t *testing.T) {
			cfgDir, cwd := t.TempDir(), t.TempDir()
			launch := telemetrytest.LaunchAfter(t)
			d := &claude.Discoverer{ConfigDir: cfgDir, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
			tc := m.Cfg
			tc.MaxLine = 4096
			r := telemetrytest.StartWatch(t, telemetry.WatchConfig{
				Discoverer: d,
				Within:     telemetrytest.WaitLimit,
				Follow:     true,
				NewParser:  func() telemetry.Parser { return claude.NewParser(claude.WindowConfig{AutoCompactWindow: 1000}) },
				Tail:       tc,
			})
			dir := filepath.Join(cfgDir, "projects", claude.ProjectDirName(cwd))
			first := filepath.Join(dir, sid+".jsonl")
			telemetrytest.AppendFile(t, first, cUser("u1", "go", "", "")+"\n")
			if o := r.Kind(telemetry.ObsSourceFound); o.Source.Path != first || o.HarnessSessionID != sid {
				t.Errorf("found %+v", o)
			}
			r.Kind(telemetry.ObsFrameOpening)

			// Garbage and an over-long line become evidence on the next
			// observation; usage at 60 % of the 1000-token window is
			// moderate pressure.
			telemetrytest.AppendFile(t, first, "\x00garbage\n"+`{"big":"`+strings.Repeat("x", 5000)+`"}`+"\n"+cAsst("m1", "r1", "claude-opus-4-8", "tool_use", 500, 0, 100, 0, "")+"\n")
			o := r.Kind(telemetry.ObsFrameOpened)
			if o.Evidence.InvalidLines != 1 || o.Evidence.OverlongLines != 1 {
				t.Errorf("evidence on next observation = %+v, want 1 invalid, 1 over-long", o.Evidence)
			}
			if o.Source.Line != 4 || o.Source.Path != first || o.Source.Kind != telemetry.SourceTranscript {
				t.Errorf("provenance %+v", o.Source)
			}
			p := r.Kind(telemetry.ObsPressure)
			if p.Level != telemetry.LevelModerate || p.Tokens != 600 || p.Window != 1000 || p.Percent != 60 {
				t.Errorf("pressure %s", telemetrytest.Summary(p))
			}
			if u := r.Got[len(r.Got)-2]; u.Kind != telemetry.ObsUsage || u.Evidence != (telemetry.Evidence{}) {
				t.Errorf("before the pressure change: %s with evidence %+v, want usage with none", telemetrytest.Summary(u), u.Evidence)
			}

			// A renewed harness writes a new file: the watcher follows it.
			time.Sleep(10 * time.Millisecond) // born strictly later than the first file
			second := filepath.Join(dir, "11111111-2222-3333-4444-555555555555.jsonl")
			telemetrytest.AppendFile(t, second, strings.ReplaceAll(cUser("v1", "again", "", ""), sid, "11111111-2222-3333-4444-555555555555")+"\n")
			if o := r.Kind(telemetry.ObsSourceFound); o.Source.Path != second {
				t.Errorf("switched to %s, want %s", o.Source.Path, second)
			}
			if o := r.Kind(telemetry.ObsHarnessSession); o.HarnessSessionID != "11111111-2222-3333-4444-555555555555" {
				t.Errorf("new harness session %s", o.HarnessSessionID)
			}

			if err := os.Remove(second); err != nil {
				t.Fatal(err)
			}
			r.Kind(telemetry.ObsSourceDeleted)
		})
	}
}

// genClaude writes a transcript of n turns in the real format, with a
// garbage line and a compaction, for property and benchmark use.
func genClaude(n int) string {
	var b strings.Builder
	for i := range n {
		p := fmt.Sprintf("prompt %d", i)
		b.WriteString(cUser(fmt.Sprintf("u%d", i), p, "", "") + "\n")
		b.WriteString(cAsst(fmt.Sprintf("m%da", i), "r", "claude-opus-4-8", "tool_use", 10*i, 100, 1000*i, 5, "") + "\n")
		b.WriteString(cUser(fmt.Sprintf("t%d", i), p, toolResult, "") + "\n")
		b.WriteString(cAsst(fmt.Sprintf("m%db", i), "r", "claude-opus-4-8", "end_turn", 10*i, 100, 1000*i+500, 5, "") + "\n")
		if i%7 == 3 {
			b.WriteString("\x01\x02 torn {\n")
		}
		if i%11 == 5 {
			b.WriteString(`{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"manual","preTokens":` + fmt.Sprint(1000*i) + `,"postTokens":700},"sessionId":"` + sid + `"}` + "\n")
		}
	}
	return b.String()
}

func obsKey(o telemetry.Observation) string {
	return fmt.Sprintf("%s @%d:%d ev=%+v", telemetrytest.Summary(o), o.Source.Line, o.Source.Offset, o.Evidence)
}

// TestWatchChunkedAppendsMatchWholeFile is the property test: appending a
// transcript in random chunk sizes (cutting lines anywhere) yields the same
// observations, with the same provenance, as reading the finished file.
func TestWatchChunkedAppendsMatchWholeFile(t *testing.T) {
	content := genClaude(40)
	parserOf := func() telemetry.Parser { return claude.NewParser(claude.WindowConfig{AutoCompactWindow: 60000}) }

	// Reference: the finished file read from the start.
	whole := filepath.Join(t.TempDir(), "whole.jsonl")
	telemetrytest.WriteFile(t, whole, content)
	ref := collectWatch(t, whole, parserOf, func(string) {})
	if len(ref) < 100 {
		t.Fatalf("reference has only %d observations", len(ref))
	}

	for _, seed := range []uint64{1, 2, 3, 4} {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, seed*7919))
			path := filepath.Join(t.TempDir(), "chunked.jsonl")
			got := collectWatch(t, path, parserOf, func(path string) {
				rest := content
				for len(rest) > 0 {
					n := min(len(rest), 1+rng.IntN(300))
					telemetrytest.AppendFile(t, path, rest[:n])
					rest = rest[n:]
					if rng.IntN(4) == 0 {
						time.Sleep(time.Millisecond) // let some reads land mid-line
					}
				}
			})
			if strings.Join(got, "\n") != strings.Join(ref, "\n") {
				for i := range min(len(got), len(ref)) {
					if got[i] != ref[i] {
						t.Fatalf("observation %d differs:\n got  %s\n want %s", i, got[i], ref[i])
					}
				}
				t.Fatalf("got %d observations, want %d", len(got), len(ref))
			}
		})
	}
}

// collectWatch follows path from its start, runs write, and returns the
// parser and pressure observations up to the last line's.
func collectWatch(t *testing.T, path string, parser func() telemetry.Parser, write func(string)) []string {
	t.Helper()
	r := telemetrytest.StartWatch(t, telemetry.WatchConfig{Path: path, NewParser: parser, Tail: telemetry.TailConfig{FromStart: true, Poll: 5 * time.Millisecond, ForcePoll: true}})
	r.Kind(telemetry.ObsSourceMode)
	write(path)
	// The last line of genClaude's output is an assistant end_turn line.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lastStart := int64(strings.LastIndex(strings.TrimSuffix(string(b), "\n"), "\n") + 1)
	r.Until("last line", func(o telemetry.Observation) bool {
		return o.Kind == telemetry.ObsFrameEnded && o.Source.Offset == lastStart
	})
	var out []string
	for _, o := range r.Got {
		switch o.Kind {
		case telemetry.ObsSourceMode, telemetry.ObsSourceFound, telemetry.ObsSourceAppeared:
			continue
		}
		out = append(out, obsKey(o))
	}
	return out
}
