package codex

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

func xEvent(typ, body string) string {
	return `{"timestamp":"2026-11-21T22:12:19.254Z","ordinal":1,"type":"event_msg","payload":{"type":"` + typ + `"` + body + `}}`
}

func xTokens(last, cum, window int) string {
	return xEvent("token_count", fmt.Sprintf(`,"info":{"total_token_usage":{"input_tokens":1,"total_tokens":%d},"last_token_usage":{"input_tokens":1,"total_tokens":%d},"model_context_window":%d},"rate_limits":null`, cum, last, window))
}

func xRecord(resp string) string {
	return `{"timestamp":"2026-11-21T22:12:20.000Z","ordinal":2,"type":"token_usage_record","payload":{"thread_id":"th","turn_id":"t1","response_id":"` + resp + `","usage":{"total_tokens":1}}}`
}

const xMeta = `{"timestamp":"2026-11-21T22:12:19.204Z","ordinal":0,"type":"session_meta","payload":{"session_id":"th-1","id":"th-1","cwd":"/home/dev/project","originator":"codex_exec","cli_version":"0.169.0","base_instructions":{"text":"You are"}}}`

func TestCodexParser(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  []string
		errs  int
	}{
		{
			name: "tool turn",
			lines: []string{
				xMeta,
				xEvent("task_started", `,"turn_id":"t1","model_context_window":258400`),
				`{"timestamp":"2026-11-21T22:12:19.300Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"t1","cwd":"/home/dev/project","model":"mock-model"}}`,
				xEvent("user_message", `,"message":"RUN_TOOL please"`),
				xEvent("token_count", `,"info":null`),
				xRecord("r1"),
				xTokens(17, 17, 258400),
				xTokens(17, 17, 258400),
				xRecord("r2"),
				xTokens(20, 37, 258400),
				xEvent("task_complete", `,"turn_id":"t1","duration_ms":2381`),
			},
			want: []string{
				"harness_session id=th-1 cwd=/home/dev/project",
				"frame_opening frame=t1 window=258400",
				"frame_opened frame=t1 window=258400",
				"user_message frame=t1",
				"usage frame=t1 tokens=17 window=258400",
				"usage frame=t1 tokens=20 window=258400",
				"frame_ended frame=t1 trigger=task_complete",
			},
		},
		{
			name: "compaction: pre skips the summary request, post is the next count",
			lines: []string{
				xMeta,
				xEvent("task_started", `,"turn_id":"t1","model_context_window":9500`),
				xRecord("r1"),
				xTokens(9300, 9300, 9500),
				xRecord("rsum"),
				xTokens(17, 9317, 9500),
				`{"timestamp":"2026-11-21T22:03:01.100Z","ordinal":20,"type":"compacted","payload":{"message":"summary","compaction_response_id":"rsum","window_number":1}}`,
				xTokens(5838, 9317, 9500),
				xEvent("task_complete", `,"turn_id":"t1"`),
			},
			want: []string{
				"harness_session id=th-1 cwd=/home/dev/project",
				"frame_opening frame=t1 window=9500",
				"frame_opened frame=t1 window=9500",
				"usage frame=t1 tokens=9300 window=9500",
				"usage frame=t1 tokens=17 window=9500",
				"compacted frame=t1 window=9500 trigger=auto pre=9300 post=5838",
				"usage frame=t1 tokens=5838 window=9500",
				"frame_ended frame=t1 trigger=task_complete",
			},
		},
		{
			name: "compaction without a following count keeps post unknown",
			lines: []string{
				xRecord("r1"),
				xTokens(800, 800, 1000),
				`{"timestamp":"2026-11-21T22:03:01.100Z","type":"compacted","payload":{"message":"s"}}`,
				xEvent("turn_aborted", `,"turn_id":"t9"`),
			},
			want: []string{
				"usage tokens=800 window=1000",
				"compacted window=1000 trigger=auto pre=800 post=0",
				"frame_ended frame=t9 trigger=aborted",
			},
		},
		{
			name:  "unusable lines are errors",
			lines: []string{`garbage`, `{"payload":{}}`, `{"type":"event_msg","payload":{"type":1}}`},
			errs:  3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, errs := telemetrytest.ParseAll(t, NewParser(), tc.lines)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
			if errs != tc.errs {
				t.Errorf("errors = %d, want %d", errs, tc.errs)
			}
		})
	}
}

func FuzzCodexParser(f *testing.F) {
	f.Add([]byte(xMeta))
	f.Add([]byte(xTokens(1, 2, 3)))
	f.Add([]byte(`{"type":"compacted","payload":{"compaction_response_id":"r"}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		p := NewParser()
		obs, err := p.Parse(nil, line, telemetry.Provenance{})
		if err != nil && len(obs) != 0 {
			t.Fatalf("error %v with %d observations", err, len(obs))
		}
		_, _ = p.Parse(nil, line, telemetry.Provenance{})
	})
}

func codexMetaLine(id, cwd string) string {
	return `{"timestamp":"2026-11-21T22:12:19.204Z","ordinal":0,"type":"session_meta","payload":{"id":"` + id + `","cwd":"` + cwd + `","originator":"codex_exec"}}` + "\n"
}

// launchToday returns a Codex home, a working folder, today's rollout
// folder in that home (with a rollout born before the launch) and the
// launch time.
func launchToday(t *testing.T) (home, cwd, day string, launch time.Time) {
	t.Helper()
	home, cwd = t.TempDir(), t.TempDir()
	now := time.Now()
	day = filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	return home, cwd, day, telemetrytest.LaunchAfter(t, filepath.Join(day, "rollout-old.jsonl"))
}

func TestCodexDiscoverer(t *testing.T) {
	home, cwd, day, launch := launchToday(t)
	telemetrytest.WriteFile(t, filepath.Join(day, "rollout-a.jsonl"), codexMetaLine("th-a", cwd))
	telemetrytest.WriteFile(t, filepath.Join(day, "rollout-other.jsonl"), codexMetaLine("th-o", "/elsewhere"))
	telemetrytest.WriteFile(t, filepath.Join(day, "rollout-partial.jsonl"), strings.TrimSuffix(codexMetaLine("th-p", cwd), "\n"))
	telemetrytest.WriteFile(t, filepath.Join(day, "unrelated.jsonl"), codexMetaLine("th-u", cwd))
	time.Sleep(10 * time.Millisecond)
	telemetrytest.WriteFile(t, filepath.Join(day, "rollout-b.jsonl"), codexMetaLine("th-b", cwd))

	tests := []struct {
		name      string
		sessionID string
		want      string
	}{
		{"cwd matches, complete first line, after launch", "", "rollout-a.jsonl rollout-b.jsonl"},
		{"known thread id", "th-b", "rollout-b.jsonl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := &Discoverer{Home: home, Cwd: cwd, Launch: launch, Slack: time.Nanosecond, SessionID: tc.sessionID}
			got, err := d.Candidates()
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.Join(telemetrytest.CandPaths(got), " "); s != tc.want {
				t.Errorf("candidates %q, want %q", s, tc.want)
			}
			for _, c := range got {
				if c.SessionID == "" {
					t.Errorf("%s: no session id", c.Path)
				}
			}
		})
	}
}

func TestDiscoverWaitsForNewFolders(t *testing.T) {
	for _, m := range telemetrytest.TailModes {
		t.Run(m.Name, func(t *testing.T) {
			home, cwd := t.TempDir(), t.TempDir()
			launch := telemetrytest.LaunchAfter(t)
			d := &Discoverer{Home: home, Cwd: cwd, Launch: launch, Slack: time.Nanosecond}
			poll := time.Hour // fsnotify mode must find it through the recursive watch alone
			if m.Cfg.ForcePoll {
				poll = 10 * time.Millisecond
			}
			type res struct {
				c   telemetry.Candidate
				err error
			}
			ch := make(chan res, 1)
			go func() {
				c, err := telemetry.Discover(context.Background(), telemetry.DiscoverConfig{Discoverer: d, Within: telemetrytest.WaitLimit, Poll: poll, ForcePoll: m.Cfg.ForcePoll})
				ch <- res{c, err}
			}()
			time.Sleep(50 * time.Millisecond) // let the watcher start on the missing root
			now := time.Now()
			day := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
			if err := os.MkdirAll(day, 0o700); err != nil {
				t.Fatal(err)
			}
			telemetrytest.WriteFile(t, filepath.Join(day, "rollout-x.jsonl"), codexMetaLine("th-x", cwd))
			r := <-ch
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.c.SessionID != "th-x" {
				t.Errorf("found %+v", r.c)
			}
		})
	}
}

func TestDiscoverCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	d := &Discoverer{Home: t.TempDir(), Cwd: "/x"}
	_, err := telemetry.Discover(ctx, telemetry.DiscoverConfig{Discoverer: d, Within: time.Minute})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
}

func TestWatchNotFoundThenFound(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	d := &Discoverer{Home: home, Cwd: cwd, Launch: telemetrytest.LaunchAfter(t), Slack: time.Nanosecond}
	r := telemetrytest.StartWatch(t, telemetry.WatchConfig{
		Discoverer: d,
		Within:     20 * time.Millisecond,
		NewParser:  func() telemetry.Parser { return NewParser() },
		Tail:       telemetry.TailConfig{Poll: 10 * time.Millisecond, ForcePoll: true},
	})
	if o := r.Kind(telemetry.ObsSourceNotFound); !strings.Contains(o.Detail, "sessions") || o.Source.Kind != SourceRollout {
		t.Errorf("not-found observation %+v", o)
	}
	now := time.Now()
	path := filepath.Join(home, "sessions", now.Format("2006/01/02"), "rollout-z.jsonl")
	telemetrytest.AppendFile(t, path, codexMetaLine("th-z", cwd)+xEvent("task_started", `,"turn_id":"t1","model_context_window":100`)+"\n"+xTokens(95, 95, 100)+"\n")
	r.Kind(telemetry.ObsSourceFound)
	if o := r.Kind(telemetry.ObsHarnessSession); o.HarnessSessionID != "th-z" || o.Cwd != cwd {
		t.Errorf("session %+v", o)
	}
	if p := r.Kind(telemetry.ObsPressure); p.Level != telemetry.LevelCritical || p.FrameID != "t1" {
		t.Errorf("pressure %s", telemetrytest.Summary(p))
	}
}

// TestWatchConfigFromHarnessEnv: the rollouts are found under CODEX_HOME
// of the harness's environment, else $HOME/.codex.
func TestWatchConfigFromHarnessEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     []string
		root    string // the discoverer's folder
		wantErr string
	}{
		{"codex home", []string{"HOME=/h"}, "/h/.codex", ""},
		{"codex CODEX_HOME wins", []string{"HOME=/h", "CODEX_HOME=/x"}, "/x", ""},
		{"no home", nil, "", "telemetry: neither CODEX_HOME nor HOME is set in the harness environment; cannot find Codex's rollouts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: tc.env, Cwd: "/p"})
			if src.Kind != SourceRollout {
				t.Errorf("kind %q, want %q", src.Kind, SourceRollout)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d, ok := src.Discoverer.(*Discoverer)
			if !ok {
				t.Fatalf("discoverer %T", src.Discoverer)
			}
			if d.Home != tc.root || d.Cwd != "/p" {
				t.Errorf("codex home %s (cwd %s), want %s", d.Home, d.Cwd, tc.root)
			}
			if k := src.NewParser().SourceKind(); k != SourceRollout {
				t.Errorf("parser kind %q", k)
			}
		})
	}
}

// The rollout's session_meta names the Codex that wrote it (cli_version):
// every observation from then on carries it.
func TestCodexParserVersion(t *testing.T) {
	p := NewParser()
	var obs []telemetry.Observation
	for _, l := range []string{xMeta, xEvent("task_started", `,"turn_id":"t1","model_context_window":258400`), xTokens(17, 17, 258400)} {
		var err error
		if obs, err = p.Parse(obs, []byte(l), telemetry.Provenance{}); err != nil {
			t.Fatal(err)
		}
	}
	if len(obs) < 2 {
		t.Fatalf("observations %+v", obs)
	}
	for _, o := range obs {
		if o.HarnessVersion != "0.169.0" {
			t.Errorf("%s carries version %q, want 0.169.0", o.Kind, o.HarnessVersion)
		}
	}
}

// A token_count whose info no longer names last_token_usage.total_tokens
// is reported as unreadable (harness drift); info null (the first
// token_count of a session) and the known shape are not.
func TestCodexParserUnreadableUsage(t *testing.T) {
	drifted := xEvent("token_count", `,"info":{"total_token_usage":{"total_tokens":30},"lastTokenUsage":{"totalTokens":30},"model_context_window":258400}`)
	for _, tc := range []struct {
		line string
		want bool
	}{
		{drifted, true},
		{xEvent("token_count", `,"info":null`), false},
		{xTokens(17, 17, 258400), false},
	} {
		p := NewParser()
		obs, err := p.Parse(nil, []byte(xMeta), telemetry.Provenance{})
		if err != nil {
			t.Fatal(err)
		}
		if obs, err = p.Parse(obs[:0], []byte(tc.line), telemetry.Provenance{}); err != nil {
			t.Fatal(err)
		}
		got := false
		for _, o := range obs {
			if o.Kind == telemetry.ObsUnreadable {
				got = true
				if o.HarnessVersion != "0.169.0" || !strings.Contains(o.Detail, "last_token_usage") {
					t.Errorf("unreadable observation %+v", o)
				}
			}
		}
		if got != tc.want {
			t.Errorf("%s: unreadable %v, want %v", tc.line, got, tc.want)
		}
	}
}

func TestRolloutNameTime(t *testing.T) {
	tests := []struct {
		name string
		want string // RFC 3339 in UTC, "" when the name carries no time
	}{
		{"rollout-2026-11-27T23-32-33-01a21f5a-7cfa-7741-a87d-7688e580428d.jsonl", "2026-11-27T23:32:33.658Z"},
		{"rollout-2025-06-01T10-00-00-5f2c1a9e-3b4d-4c8e-9f1a-2b3c4d5e6f70.jsonl", ""}, // a v4 thread id
		{"rollout-a.jsonl", ""},
		{"rollout-2026-11-27T23-32-33-01a21f5a-7cfa-7741-a87d-7688e580428d.json", ""},
		{"rollout-2026-11-27T23-32-33-01a21f5a-7cfa-7741-187d-7688e580428d.jsonl", ""}, // not the RFC 9562 variant
	}
	for _, tc := range tests {
		got, ok := nameTime(tc.name)
		if s := got.UTC().Format("2006-01-02T15:04:05.000Z"); ok != (tc.want != "") || (ok && s != tc.want) {
			t.Errorf("nameTime(%q) = %s, %v; want %q", tc.name, s, ok, tc.want)
		}
	}
}

// TestCodexDiscovererSkipsRolloutsNamedBeforeLaunch: a rollout whose
// thread id says it started before the launch is not this launch's, even
// when its file is new, and is passed over without a look at the file.
func TestCodexDiscovererSkipsRolloutsNamedBeforeLaunch(t *testing.T) {
	home, cwd, day, launch := launchToday(t)
	v7 := func(at time.Time) string {
		ms := fmt.Sprintf("%012x", at.UnixMilli())
		return "rollout-" + at.Format("2006-01-02T15-04-05") + "-" + ms[:8] + "-" + ms[8:] + "-7000-8000-000000000000.jsonl"
	}
	before, after := v7(launch.Add(-time.Hour)), v7(launch.Add(time.Second))
	telemetrytest.WriteFile(t, filepath.Join(day, before), codexMetaLine("th-before", cwd))
	telemetrytest.WriteFile(t, filepath.Join(day, after), codexMetaLine("th-after", cwd))
	d := &Discoverer{Home: home, Cwd: cwd, Launch: launch, Slack: time.Second}
	got, err := d.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(telemetrytest.CandPaths(got), " "); s != after {
		t.Errorf("candidates %q, want %q", s, after)
	}
}

// TestCodexSkipFolder: the watchers pass over year, month and day
// folders outside the launch's days (a day either side, local and UTC),
// so their cost does not grow with the rollouts Codex keeps; a session of
// any age, and a folder that is not a date, skip nothing.
func TestCodexSkipFolder(t *testing.T) {
	home := t.TempDir()
	launch := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return launch.Add(time.Minute) }
	d := &Discoverer{Home: home, Launch: launch, Now: now}
	under := func(rel string) string { return filepath.Join(home, "sessions", filepath.FromSlash(rel)) }
	for rel, skip := range map[string]bool{
		"2025":       true,
		"2026":       false,
		"2026/10":    true,
		"2026/11":    false,
		"2026/11/20": true,
		"2026/11/27": false,
		"2026/11/28": false,
		"2026/11/29": false,
		"2026/11/30": true,
		"archive":    false,
		"2026/11/xx": false,
	} {
		if got := d.SkipFolder(under(rel)); got != skip {
			t.Errorf("SkipFolder(%s) = %v, want %v", rel, got, skip)
		}
	}
	anyAge := &Discoverer{Home: home, Now: now}
	if anyAge.SkipFolder(under("2025")) {
		t.Error("a session of any age skips a past year")
	}
}

// TestCodexDiscovererPassesOverThePreviousOneShot: one-shots run back to
// back in one folder; the rollout of the one that ended just before this
// launch is not this launch's, though it is younger than a second.
func TestCodexDiscovererPassesOverThePreviousOneShot(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	now := time.Now()
	day := filepath.Join(home, "sessions", now.Format("2006"), now.Format("01"), now.Format("02"))
	telemetrytest.WriteFile(t, filepath.Join(day, "rollout-previous.jsonl"), codexMetaLine("th-previous", cwd))
	time.Sleep(2 * telemetry.FineSlack)
	launch := time.Now()
	telemetrytest.WriteFile(t, filepath.Join(day, "rollout-this.jsonl"), codexMetaLine("th-this", cwd))
	got, err := (&Discoverer{Home: home, Cwd: cwd, Launch: launch}).Candidates()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].SessionID != "th-this" {
		t.Errorf("candidates %+v, want only th-this", got)
	}
}
