package launcher

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/observe"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestAttentionFromTheScreen: a harness that draws its permission
// dialog's text (the adapter's AttentionScreen) puts the session in
// needs_permission from the screen; the key that answers it makes it
// working, and only the dialog drawn anew after that key opens a second
// episode: the text repainted before the key is not reported again.
func TestAttentionFromTheScreen(t *testing.T) {
	t.Parallel()
	in, keys, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = keys.Close(); _ = in.Close() })
	script := `d='\033[1mDo you\033[1Cwant to proceed?\033[0m\r\n \342\235\257 1. Yes\r\n'
printf "$d"; sleep 0.1; printf "\033[3A$d"; read answer; printf 'ran\r\n'; sleep 0.2; printf "$d"; read again`
	f := newFixture(t, script)
	ad := adapters.AdapterOf(claude.Harness{})
	att := newAttentionSources(ad)
	f.cfg.Adapter, f.cfg.Record.AdapterID, f.cfg.attention = ad, "claude", att
	f.cfg.Spec.Screen = att.screenWatch()
	f.cfg.Terminal.In = in
	f.cfg.ControlSocket = control.SocketIn(statedir.SessionDir(f.root, f.cfg.Record.ID))
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()

	var first control.Attention
	testutil.WaitFor(t, func() bool { first = statusAttention(t, f); return first.State == "needs_permission" })
	if first.Source != "screen" {
		t.Fatalf("attention %+v, want needs_permission from the screen", first)
	}
	time.Sleep(300 * time.Millisecond) // the repaint has been drawn and read
	if a := statusAttention(t, f); a.State != "needs_permission" || !a.Since.Equal(first.Since) {
		t.Fatalf("attention after the repaint %+v, want the first episode %+v", a, first)
	}
	if _, err := io.WriteString(keys, "1\n"); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ran") })
	var second control.Attention
	testutil.WaitFor(t, func() bool {
		second = statusAttention(t, f)
		return second.State == "needs_permission" && second.Since.After(first.Since)
	})
	if second.Source != "screen" || second.WaitedSeconds <= 0 {
		t.Fatalf("attention after the dialog drawn anew %+v, want a second screen episode", second)
	}
	if _, err := io.WriteString(keys, "\n"); err != nil {
		t.Fatal(err)
	}
	if res := <-done; res.ExitCode != 0 {
		t.Fatalf("session ended %+v", res)
	}
}

// statusAttention is the attention status reports (zero before any, or
// while the control socket is not answering yet).
func statusAttention(t *testing.T, f *fixture) control.Attention {
	t.Helper()
	var st control.Status
	if err := callCtl(t, f, control.OpStatus, nil, &st); err != nil || st.Attention == nil {
		return control.Attention{}
	}
	return *st.Attention
}

// stamp matches a transcript line's RFC 3339 timestamps.
var stamp = regexp.MustCompile(`"20\d\d-\d\d-\d\dT[0-9:.]+Z"`)

// shifted returns the lines of the recorded transcript sample, their
// timestamps moved so that its first is at.
func shifted(t *testing.T, sample string, at time.Time) []string {
	t.Helper()
	b, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	var delta time.Duration
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, stamp.ReplaceAllStringFunc(sc.Text(), func(s string) string {
			ts, err := time.Parse(time.RFC3339Nano, strings.Trim(s, `"`))
			if err != nil {
				return s
			}
			if delta == 0 {
				delta = at.Sub(ts)
			}
			return `"` + ts.Add(delta).UTC().Format("2006-01-02T15:04:05.000Z") + `"`
		}))
	}
	return lines
}

// TestAttentionFromTheTranscript: the lines the telemetry watcher reads
// from the harness's transcript also go through its AttentionRecord: the
// recorded API error (a 429) puts the session in stopped_on_error from the
// transcript, naming the error; the next prompt's line makes it working;
// its 500 stops it again.
func TestAttentionFromTheTranscript(t *testing.T) {
	lines := shifted(t, filepath.Join("..", "adapters", "claude", "testdata", "attention", "claude-stopfailure.transcript.jsonl"), time.Now().Add(time.Second))
	var cut, second int // the first turn's error; the second prompt
	for i, l := range lines {
		if cut == 0 && strings.Contains(l, `"isApiErrorMessage":true`) {
			cut = i + 1
		}
		if strings.Contains(l, `"content":"hello 500"`) {
			second = i
		}
	}
	if cut == 0 || second <= cut {
		t.Fatal("the sample no longer has two turns that fail")
	}
	path := filepath.Join(t.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	appendLines := func(ls []string) {
		fh, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		if _, err := fh.WriteString(strings.Join(ls, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
	}

	f, ft := renewFixture(t)
	f.cfg.ControlSocket = control.SocketIn(statedir.SessionDir(f.root, f.cfg.Record.ID))
	att := newAttentionSources(f.cfg.Adapter)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The usage meter too, as under run: it reads the transcript again on
	// the loop (status, frame ends) with parsers that must not hand the
	// loop an attention fact (they once did, and the loop waited forever).
	env := []string{"HOME=" + t.TempDir()}
	meter := newUsageMeter(f.cfg.Adapter, env, slog.New(slog.DiscardHandler))
	tel := &telemetryRunner{ctx: ctx, log: slog.New(slog.DiscardHandler), ad: f.cfg.Adapter, att: att, usage: meter, opts: observe.Options{
		Harness: f.cfg.Adapter.Telemetry(), Env: env, Cwd: t.TempDir(), Path: path, FromStart: true, Now: time.Now,
	}}
	defer tel.stop()
	f.cfg.Telemetry, f.cfg.Observations, f.cfg.attention = tel, tel.start("", time.Now()), att
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	defer endSession(ft, done)

	appendLines(lines[:cut])
	var a control.Attention
	testutil.WaitFor(t, func() bool { a = statusAttention(t, f); return a.State == "stopped_on_error" })
	if a.Source != "transcript" || a.Detail != "rate_limit (429)" {
		t.Fatalf("attention after the 429 line %+v, want stopped_on_error from the transcript, rate_limit (429)", a)
	}
	appendLines(lines[cut : second+1])
	testutil.WaitFor(t, func() bool { a = statusAttention(t, f); return a.State == "working" })
	appendLines(lines[second+1:])
	testutil.WaitFor(t, func() bool { a = statusAttention(t, f); return a.State == "stopped_on_error" })
	if a.Source != "transcript" || a.Detail != "server_error (500)" {
		t.Fatalf("attention after the 500 line %+v, want stopped_on_error from the transcript, server_error (500)", a)
	}
}
