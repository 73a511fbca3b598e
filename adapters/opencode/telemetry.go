package opencode

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// SourceDatabase is the kind of OpenCode's session store named in
// receipts' provenance.
const SourceDatabase telemetry.SourceKind = "database"

var _ telemetry.RecordSource = (*Discoverer)(nil)

// TelemetrySource implements adapters.Telemetry: the sessions of the
// launch's folder in OpenCode's database, read as records.
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src := adapters.TelemetrySource{Kind: SourceDatabase}
	db := DatabasePath(t.Env)
	if db == "" {
		return src, errors.New("telemetry: neither XDG_DATA_HOME nor HOME is set in the harness environment; cannot find OpenCode's database")
	}
	src.Discoverer = &Discoverer{Database: db, Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID}
	windows := loadWindows(t.Env, t.Cwd)
	src.NewParser = func() telemetry.Parser { return NewParser(windows.window) }
	return src, nil
}

// DataDir returns OpenCode's data folder for the environment env:
// $XDG_DATA_HOME/opencode, else $HOME/.local/share/opencode; "" when
// neither is set.
func DataDir(env []string) string {
	if d := adapters.EnvValue(env, "XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "opencode")
	}
	if h := adapters.EnvValue(env, "HOME"); h != "" {
		return filepath.Join(h, ".local", "share", "opencode")
	}
	return ""
}

// DatabasePath returns the database OpenCode 1.18 uses in env: $OPENCODE_DB
// (relative to the data folder unless absolute), else
// <data>/opencode.db (the "latest" channel's name).
func DatabasePath(env []string) string {
	data := DataDir(env)
	if p := adapters.EnvValue(env, "OPENCODE_DB"); p != "" && p != ":memory:" {
		if filepath.IsAbs(p) {
			return p
		}
		if data == "" {
			return ""
		}
		return filepath.Join(data, p)
	}
	if data == "" {
		return ""
	}
	return filepath.Join(data, "opencode.db")
}

// Discoverer finds the OpenCode session of a launch: a top-level session
// row (no parent: sub-agent sessions are not followed) whose directory is
// Cwd (any folder when Cwd is empty), created at or after Launch-Slack — or exactly SessionID when the
// launch named it (then its age does not matter: a resumed session).
// Candidate paths are "<database>#<session id>". Concurrent launches in
// one folder are kept apart by telemetry.Claims (each takes the oldest
// session nobody else holds).
//
// Candidates opens the database read-only for each scan, and answers
// from the previous scan while the database and its WAL are unchanged
// (size and modification time): the folder watcher asks on every write
// to the folder.
type Discoverer struct {
	Database  string
	Cwd       string
	Launch    time.Time
	Slack     time.Duration // default telemetry.DefaultSlack
	SessionID string

	mu      sync.Mutex
	sig     [4]int64
	cached  []telemetry.Candidate
	scanned bool
}

// Roots implements telemetry.Discoverer: the database's folder.
func (d *Discoverer) Roots() []string { return []string{filepath.Dir(d.Database)} }

// SourceKind implements telemetry.Discoverer.
func (d *Discoverer) SourceKind() telemetry.SourceKind { return SourceDatabase }

// Follow implements telemetry.RecordSource: the events of the session
// cfg.Path names, from the first, then as OpenCode writes them.
func (d *Discoverer) Follow(ctx context.Context, cfg telemetry.TailConfig, sink func(telemetry.TailEvent)) error {
	return follow(ctx, cfg, sink)
}

// Candidates implements telemetry.Discoverer.
func (d *Discoverer) Candidates() ([]telemetry.Candidate, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	sig := kit.Signature(d.Database)
	if d.scanned && sig == d.sig {
		return append([]telemetry.Candidate(nil), d.cached...), nil
	}
	out, err := d.scan()
	if err != nil {
		return nil, err
	}
	d.cached, d.sig, d.scanned = out, sig, true
	return append([]telemetry.Candidate(nil), out...), nil
}

func (d *Discoverer) scan() ([]telemetry.Candidate, error) {
	db, err := kit.OpenReadOnly(d.Database)
	if err != nil {
		return nil, nil // no database yet: OpenCode creates it on first start
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	since := d.Launch.Add(-telemetry.Slack(d.Slack))
	if d.Launch.IsZero() {
		since = time.Time{}
	}
	var dirs []string
	if d.Cwd != "" {
		dirs = telemetry.CwdSpellings(d.Cwd)
	}
	ss, err := listSessions(ctx, db, dirs, since, d.SessionID)
	if err != nil {
		if isMissingSchema(err) {
			return nil, nil // created but not migrated yet
		}
		return nil, err
	}
	out := make([]telemetry.Candidate, 0, len(ss))
	for _, s := range ss {
		out = append(out, telemetry.Candidate{Path: SessionPath(d.Database, s.ID), Born: s.Created, SessionID: s.ID, Updated: s.Updated})
	}
	telemetry.SortCandidates(out)
	return out, nil
}

// isMissingSchema reports an error from a database OpenCode has not
// created its tables in yet.
func isMissingSchema(err error) bool {
	return err != nil && strings.Contains(err.Error(), "no such table")
}

var _ telemetry.SourceResolver = (*Discoverer)(nil)

// Resolve implements telemetry.SourceResolver: "<database>#<session id>"
// names that session; the database's own path names its newest top-level
// session of Cwd (of any folder when Cwd is empty), whatever its age.
func (d *Discoverer) Resolve(path string) (string, error) {
	if _, _, err := splitSessionPath(path); err == nil {
		return path, nil
	}
	if err := kit.WALReady(path); err != nil {
		return "", fmt.Errorf("%s is not an OpenCode database (%w); give the database, or <database>%s<session id>", path, err, sessionSep)
	}
	ss, err := (&Discoverer{Database: path, Cwd: d.Cwd}).Candidates()
	if err != nil {
		return "", err
	}
	if len(ss) == 0 {
		where := "any folder"
		if d.Cwd != "" {
			where = d.Cwd
		}
		return "", fmt.Errorf("the OpenCode database %s holds no session of %s; give --cwd the session's folder, or <database>%s<session id>", path, where, sessionSep)
	}
	return ss[len(ss)-1].Path, nil
}

// End implements telemetry.SourceResolver: one past the seq of the
// session's last event (Follow's offsets are seqs).
func (d *Discoverer) End(path string) (int64, error) {
	dbPath, id, err := splitSessionPath(path)
	if err != nil {
		return 0, err
	}
	db, err := kit.OpenReadOnly(dbPath)
	if err != nil {
		return 0, fmt.Errorf("opening OpenCode's database: %w", err)
	}
	defer func() { _ = db.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return sessionEnd(ctx, db, id)
}
