package openclaw

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"

	_ "modernc.org/sqlite"
)

// The files in testdata hold the event_json of transcript_events rows the
// real OpenClaw 2026.9.6 wrote against the loopback mock, one per line
// (paths under /home/dev):
//
//	openclaw-plain-turn.transcript.jsonl  agent --local -m "say hi"
//	openclaw-compact.transcript.jsonl     three turns, the second 190 540 tokens; OpenClaw compacted
//	                                      before the third

func readLines(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// config is an openclaw.json in OpenClaw's JSON5: comments, unquoted
// keys, trailing commas.
const config = `// lifeloop test
{
  models: {
    mode: "replace",
    providers: {
      mock: { baseUrl: "http://127.0.0.1:9", api: "anthropic-messages",
        models: [ { id: "mock-model", contextWindow: 200000, maxTokens: 8192, }, { id: "no-window" } ], },
      other: { models: [ { id: 'm2', contextWindow: 0x10000 } ] },
    },
  },
}
`

// home returns a HOME whose ~/.openclaw/openclaw.json is config.
func home(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	if err := os.MkdirAll(filepath.Join(h, ".openclaw"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h, ".openclaw", "openclaw.json"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestReadWindowsJSON5(t *testing.T) {
	h := home(t)
	got := readWindows(ConfigPath([]string{"HOME=" + h}))
	want := map[string]int64{"mock/mock-model": 200000, "other/m2": 65536}
	if len(got) != len(want) || got["mock/mock-model"] != 200000 || got["other/m2"] != 65536 {
		t.Errorf("windows %v, want %v", got, want)
	}
	if p := ConfigPath([]string{"HOME=" + h, "OPENCLAW_CONFIG_PATH=/x/c.json5"}); p != "/x/c.json5" {
		t.Errorf("config path %s", p)
	}
	if s := StateDir([]string{"HOME=" + h, "OPENCLAW_STATE_DIR=/s"}); s != "/s" {
		t.Errorf("state dir %s", s)
	}
	if len(readWindows(filepath.Join(h, "missing.json"))) != 0 {
		t.Error("windows from a missing file")
	}
}

func TestParserRealRows(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"openclaw-plain-turn.transcript.jsonl", nil},
		{"openclaw-compact.transcript.jsonl", []string{
			"harness_session id=comp-1 cwd=/home/dev/.openclaw/workspace",
			"frame_opening frame=comp-1#1 window=200000",
			"frame_opened frame=comp-1#1 window=200000",
			"usage frame=comp-1#1 tokens=17 window=200000",
			"frame_ended frame=comp-1#1 trigger=stop",
			"frame_opening frame=comp-1#2 window=200000",
			"frame_opened frame=comp-1#2 window=200000",
			"usage frame=comp-1#2 tokens=190540 window=200000",
			"frame_ended frame=comp-1#2 trigger=stop",
			"compacted window=200000 trigger=harness pre=190540 post=0",
			"frame_opening frame=comp-1#3 window=200000",
			"frame_opened frame=comp-1#3 window=200000",
			"usage frame=comp-1#3 tokens=17 window=200000",
			"frame_ended frame=comp-1#3 trigger=stop",
		}},
	}
	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + home(t)}})
	if err != nil {
		t.Fatal(err)
	}
	if src.Kind != SourceDatabase {
		t.Errorf("kind %s", src.Kind)
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, errs := telemetrytest.ParseAll(t, src.NewParser(), readLines(t, tt.file))
			if errs != 0 {
				t.Errorf("%d rows rejected", errs)
			}
			if tt.want == nil {
				if len(got) != 5 || !strings.HasPrefix(got[0], "harness_session id=") || !strings.HasPrefix(got[3], "usage ") {
					t.Errorf("got\n%s", strings.Join(got, "\n"))
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// agentDB creates an agent database under state with the two tables
// lifeloop reads (only the columns it reads), in WAL mode.
func agentDB(t *testing.T, state string) (string, *sql.DB) {
	t.Helper()
	dir := filepath.Join(state, "agents", "main", "agent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, dbName)
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, q := range []string{
		`CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL)`,
		`CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, created_at INTEGER NOT NULL, event_zstd BLOB, PRIMARY KEY (session_id, seq))`,
	} {
		if _, err := db.ExecContext(t.Context(), q); err != nil {
			t.Fatal(err)
		}
	}
	return path, db
}

func addSession(t *testing.T, db *sql.DB, id string, at time.Time) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), `INSERT INTO session_windows VALUES (?, ?, ?, ?)`, id, "agent:main:"+id, at.UnixMilli(), at.UnixMilli()); err != nil {
		t.Fatal(err)
	}
}

// addRow appends a row to session id, compressed when z.
func addRow(t *testing.T, db *sql.DB, id string, seq int64, js string, z bool, at time.Time) {
	t.Helper()
	var err error
	if z {
		enc, _ := zstd.NewWriter(nil)
		_, err = db.ExecContext(t.Context(), `INSERT INTO transcript_events (session_id, seq, event_json, created_at, event_zstd) VALUES (?, ?, NULL, ?, ?)`, id, seq, at.UnixMilli(), enc.EncodeAll([]byte(js), nil))
		_ = enc.Close()
	} else {
		_, err = db.ExecContext(t.Context(), `INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)`, id, seq, js, at.UnixMilli())
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(t.Context(), `UPDATE session_windows SET updated_at = ? WHERE session_id = ?`, at.UnixMilli(), id); err != nil {
		t.Fatal(err)
	}
}

// TestDiscovererNewAndContinued: a session that existed before the launch
// is a candidate once it gets rows after the launch and is read from
// them (with its session and model_change entries); a session born after
// the launch is read whole, compressed rows included.
func TestDiscovererNewAndContinued(t *testing.T) {
	state := t.TempDir()
	path, db := agentDB(t, state)
	old := time.Now().Add(-time.Hour)
	addSession(t, db, "old", old)
	addRow(t, db, "old", 0, `{"type":"session","version":4,"id":"old"}`, false, old)
	addRow(t, db, "old", 1, `{"type":"model_change","provider":"mock","modelId":"mock-model"}`, false, old)
	addRow(t, db, "old", 2, `{"type":"message","message":{"role":"user","content":"earlier"}}`, false, old)

	launch := time.Now()
	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"OPENCLAW_STATE_DIR=" + state, "HOME=" + t.TempDir()}, LaunchedAt: launch})
	if err != nil {
		t.Fatal(err)
	}
	d := src.Discoverer.(*discoverer)
	if cs, err := d.Candidates(); err != nil || len(cs) != 0 {
		t.Fatalf("candidates before any new row: %v %v", cs, err)
	}
	if roots := d.Roots(); len(roots) != 1 || roots[0] != filepath.Join(state, "agents") {
		t.Errorf("roots %v", roots)
	}
	now := time.Now()
	addRow(t, db, "old", 3, `{"type":"message","message":{"role":"user","content":"continued"}}`, false, now)
	addSession(t, db, "new", now.Add(time.Millisecond))
	addRow(t, db, "new", 0, `{"type":"session","version":4,"id":"new"}`, false, now)
	long := `{"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("x", 2000) + `"}]}}`
	addRow(t, db, "new", 1, long, true, now)

	cs, err := d.Candidates()
	if err != nil {
		t.Fatal(err)
	}
	if got := telemetrytest.CandPaths(cs); !slices.Equal(got, []string{dbName + "#old", dbName + "#new"}) {
		t.Fatalf("candidates %v", got)
	}
	if got := follow(t, d, path+"#old", 3); !slices.Equal(got, []string{
		`{"type":"session","version":4,"id":"old"}`,
		`{"type":"model_change","provider":"mock","modelId":"mock-model"}`,
		`{"type":"message","message":{"role":"user","content":"continued"}}`,
	}) {
		t.Errorf("continued session rows %v", got)
	}
	if got := follow(t, d, path+"#new", 2); len(got) != 2 || got[1] != long {
		t.Errorf("new session rows %d, compressed row decoded: %v", len(got), len(got) == 2 && got[1] == long)
	}
	// A pinned session id picks that session only, whatever its age.
	d.SessionID, d.scanned = "old", false
	if cs, _ := d.Candidates(); len(cs) != 1 || cs[0].SessionID != "old" {
		t.Errorf("pinned candidates %v", cs)
	}
}

// follow reads the rows of session path until n lines came.
func follow(t *testing.T, d *discoverer, path string, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var mu sync.Mutex
	var lines []string
	done := make(chan error, 1)
	go func() {
		done <- d.Follow(ctx, telemetry.TailConfig{Path: path, ForcePoll: true, Poll: 10 * time.Millisecond}, func(ev telemetry.TailEvent) {
			mu.Lock()
			defer mu.Unlock()
			switch ev.Kind {
			case telemetry.EventLine:
				lines = append(lines, string(ev.Line))
				if len(lines) == n {
					cancel()
				}
			case telemetry.EventError:
				t.Errorf("follow: %v", ev.Err)
			}
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return lines
}
