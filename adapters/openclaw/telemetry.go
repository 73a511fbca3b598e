package openclaw

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/titanous/json5"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// SourceDatabase is the kind of OpenClaw's session store named in
// receipts' provenance.
const SourceDatabase telemetry.SourceKind = "database"

// OpenClaw's environment variables lifeloop reads from the harness's
// environment.
const (
	stateDirVar   = "OPENCLAW_STATE_DIR"
	configPathVar = "OPENCLAW_CONFIG_PATH"
)

// dbName is the per-agent database under <state>/agents/<agent>/agent/.
const dbName = "openclaw-agent.sqlite"

// sessionSep separates the database path from the session id in a
// candidate's path: "<db>#<session id>".
const sessionSep = "#"

var _ telemetry.RecordSource = (*discoverer)(nil)

// TelemetrySource implements adapters.Telemetry: the sessions of every
// agent database under OpenClaw's state folder that the launch starts or
// continues, read as Pi session entries (kit.NewEntryParser), with the
// model windows of OpenClaw's configuration.
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src := adapters.TelemetrySource{Kind: SourceDatabase}
	state := StateDir(t.Env)
	if state == "" {
		return src, errors.New("telemetry: neither OPENCLAW_STATE_DIR nor HOME is set in the harness environment; cannot find OpenClaw's databases")
	}
	windows := readWindows(ConfigPath(t.Env))
	d := &discoverer{State: state, Launch: t.LaunchedAt, SessionID: t.SessionID}
	d.baseline = d.snapshot()
	src.Discoverer = d
	src.NewParser = func() telemetry.Parser { return kit.NewEntryParser(SourceDatabase, windows, "harness") }
	return src, nil
}

// StateDir is OpenClaw's state folder in env: $OPENCLAW_STATE_DIR, else
// $HOME/.openclaw; "" when neither is set. (--profile NAME and --dev, which
// choose ~/.openclaw-NAME and ~/.openclaw-dev, are not read.)
func StateDir(env []string) string {
	if d := adapters.EnvValue(env, stateDirVar); d != "" {
		return d
	}
	if h := adapters.EnvValue(env, "HOME"); h != "" {
		return filepath.Join(h, ".openclaw")
	}
	return ""
}

// ConfigPath is OpenClaw's configuration file in env:
// $OPENCLAW_CONFIG_PATH, else <state>/openclaw.json.
func ConfigPath(env []string) string {
	if p := adapters.EnvValue(env, configPathVar); p != "" {
		return p
	}
	if s := StateDir(env); s != "" {
		return filepath.Join(s, "openclaw.json")
	}
	return ""
}

// readWindows reads the models of OpenClaw's configuration (JSON5):
// models.providers.NAME.models[] {id, contextWindow}, as "NAME/id" →
// contextWindow, following the $include at a file's top (a path or a
// list of paths, relative to the including file, up to OpenClaw's ten
// levels; the including file's own keys win, as in OpenClaw's merge).
// Models without a contextWindow, OpenClaw's built-in catalogue and an
// $include inside a key are not read: their window stays unknown (no
// pressure levels).
func readWindows(path string) map[string]int64 {
	out := map[string]int64{}
	readWindowsInto(out, path, 0)
	return out
}

// maxIncludeDepth is OpenClaw's limit on nested includes.
const maxIncludeDepth = 10

func readWindowsInto(out map[string]int64, path string, depth int) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 4<<20 || depth > maxIncludeDepth {
		return
	}
	var f struct {
		Include json5.RawMessage `json:"$include"`
		Models  struct {
			Providers map[string]struct {
				Models []struct {
					ID            string `json:"id"`
					ContextWindow int64  `json:"contextWindow"`
				} `json:"models"`
			} `json:"providers"`
		} `json:"models"`
	}
	if json5.Unmarshal(data, &f) != nil {
		return
	}
	var includes []string
	if len(f.Include) > 0 {
		var one string
		if json5.Unmarshal(f.Include, &one) == nil {
			includes = []string{one}
		} else {
			_ = json5.Unmarshal(f.Include, &includes)
		}
	}
	for _, inc := range includes {
		if inc == "" {
			continue
		}
		if !filepath.IsAbs(inc) {
			inc = filepath.Join(filepath.Dir(path), inc)
		}
		readWindowsInto(out, inc, depth+1)
	}
	for p, prov := range f.Models.Providers {
		for _, m := range prov.Models {
			if m.ContextWindow > 0 && m.ID != "" {
				out[p+"/"+m.ID] = m.ContextWindow
			}
		}
	}
}

// discoverer finds the OpenClaw session of a launch in the agent
// databases under State (<state>/agents/<agent>/agent/openclaw-agent.sqlite,
// SQLite in WAL mode, opened read-only): a session whose window row was
// created at or after Launch-Slack (a new session), or one that existed
// before the launch and got transcript rows since (a continued session:
// `agent --local` without a session selector continues agent:main:main).
// A continued session is read from the rows written after the launch,
// with its session and model_change entries before them (the session id
// and the model); its turns are numbered again from 1. SessionID, when
// known, picks that session only. One embedded OpenClaw process owns a
// state folder at a time, so concurrent launches have a state folder
// each; telemetry.Claims keeps launches sharing one apart by order.
type discoverer struct {
	State     string
	Launch    time.Time
	Slack     time.Duration // default telemetry.DefaultSlack
	SessionID string

	// baseline is the last transcript seq of every session that existed
	// when the discoverer was made ("<db>#<id>" → seq).
	baseline map[string]int64

	mu      sync.Mutex
	sigs    map[string][4]int64
	cached  []telemetry.Candidate
	scanned bool
}

// Roots implements telemetry.Discoverer: the agents folder.
func (d *discoverer) Roots() []string { return []string{filepath.Join(d.State, "agents")} }

// SourceKind implements telemetry.Discoverer.
func (d *discoverer) SourceKind() telemetry.SourceKind { return SourceDatabase }

// databases lists the agent databases that exist.
func (d *discoverer) databases() []string {
	m, _ := filepath.Glob(filepath.Join(d.State, "agents", "*", "agent", dbName))
	slices.Sort(m)
	return m
}

// snapshot reads the last seq of every session in the databases now.
func (d *discoverer) snapshot() map[string]int64 {
	out := map[string]int64{}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, p := range d.databases() {
		db, err := kit.OpenReadOnly(p)
		if err != nil {
			continue
		}
		rows, err := db.QueryContext(ctx, "SELECT session_id, MAX(seq) FROM transcript_events GROUP BY session_id")
		if err == nil {
			for rows.Next() {
				var id string
				var seq int64
				if rows.Scan(&id, &seq) == nil {
					out[p+sessionSep+id] = seq
				}
			}
			_ = rows.Close()
		}
		_ = db.Close()
	}
	return out
}

// Candidates implements telemetry.Discoverer. It answers from the
// previous scan while no database changed (size and modification time of
// each database and its WAL).
func (d *discoverer) Candidates() ([]telemetry.Candidate, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	dbs := d.databases()
	sigs := make(map[string][4]int64, len(dbs))
	for _, p := range dbs {
		sigs[p] = kit.Signature(p)
	}
	if d.scanned && mapsEqual(sigs, d.sigs) {
		return slices.Clone(d.cached), nil
	}
	var out []telemetry.Candidate
	for _, p := range dbs {
		cs, err := d.scan(p)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	telemetry.SortCandidates(out)
	d.cached, d.sigs, d.scanned = out, sigs, true
	return slices.Clone(out), nil
}

func mapsEqual(a, b map[string][4]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// scan lists the candidates of one database.
func (d *discoverer) scan(path string) ([]telemetry.Candidate, error) {
	db, err := kit.OpenReadOnly(path)
	if err != nil {
		return nil, nil // not there, or not in WAL mode yet
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	since := d.Launch.Add(-telemetry.Slack(d.Slack))
	if d.Launch.IsZero() {
		since = time.Time{}
	}
	// A session's first transcript row after the baseline (every row for
	// a session born after it), with the window's creation time.
	rows, err := db.QueryContext(ctx, `SELECT w.session_id, w.created_at,
		(SELECT MAX(seq) FROM transcript_events e WHERE e.session_id = w.session_id)
		FROM session_windows w WHERE w.updated_at >= ? ORDER BY w.created_at, w.session_id`, since.UnixMilli())
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return nil, nil // created but not migrated yet
		}
		return nil, fmt.Errorf("openclaw: reading sessions of %s: %w", path, err)
	}
	defer func() { _ = rows.Close() }()
	var out []telemetry.Candidate
	for rows.Next() {
		var id string
		var created int64
		var last sql.NullInt64
		if err := rows.Scan(&id, &created, &last); err != nil {
			return nil, err
		}
		if !last.Valid || (d.SessionID != "" && id != d.SessionID) {
			continue
		}
		key := path + sessionSep + id
		born := time.UnixMilli(created)
		if base, ok := d.baseline[key]; ok {
			if last.Int64 <= base {
				continue // nothing written since the launch
			}
			if born.Before(d.Launch) {
				born = d.Launch
			}
		} else if born.Before(since) && d.SessionID == "" {
			continue
		}
		out = append(out, telemetry.Candidate{Path: key, Born: born, SessionID: id})
	}
	return out, rows.Err()
}

// Follow implements telemetry.RecordSource: the rows of the session
// cfg.Path names, from the first one after the launch's baseline, then
// as OpenClaw writes them.
func (d *discoverer) Follow(ctx context.Context, cfg telemetry.TailConfig, sink func(telemetry.TailEvent)) error {
	i := strings.LastIndex(cfg.Path, sessionSep)
	if i <= 0 || i == len(cfg.Path)-1 {
		return fmt.Errorf("openclaw: %q names no session (want <database>%s<session id>)", cfg.Path, sessionSep)
	}
	base, ok := d.baseline[cfg.Path]
	if !ok {
		base = -1
	}
	return kit.FollowSession(ctx, cfg, sink, cfg.Path[:i], cfg.Path[i+1:], rowReader(base))
}

// rowReader reads transcript_events rows: event_json, or event_zstd
// decompressed (OpenClaw stores a row of 1 KiB or more zstd-compressed
// when that saves a tenth). Rows at or below base are skipped, except
// the session and model_change entries.
func rowReader(base int64) kit.RowReader {
	return func(ctx context.Context, db *sql.DB, id string, after int64, limit int, dst []kit.Row) ([]kit.Row, error) {
		rows, err := db.QueryContext(ctx, `SELECT seq, event_json, event_zstd FROM transcript_events
			WHERE session_id = ? AND seq > ? AND (seq > ? OR json_extract(event_json, '$.type') IN ('session', 'model_change'))
			ORDER BY seq LIMIT ?`, id, after, base, limit)
		if err != nil {
			return dst, err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var seq int64
			var js sql.NullString
			var z []byte
			if err := rows.Scan(&seq, &js, &z); err != nil {
				return dst, err
			}
			line := []byte(js.String)
			if !js.Valid {
				if line, err = decompress(z); err != nil {
					return dst, fmt.Errorf("row %d: %w", seq, err)
				}
			}
			dst = append(dst, kit.Row{Seq: seq, Line: line})
		}
		return dst, rows.Err()
	}
}

// maxRow is the largest row OpenClaw stores (its CHECK constraint).
const maxRow = 4 << 20

var decoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxRow))
})

func decompress(z []byte) ([]byte, error) {
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	return dec.DecodeAll(z, nil)
}
