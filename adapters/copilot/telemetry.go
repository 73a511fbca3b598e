package copilot

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
)

// SourceEvents is the kind of Copilot CLI's session file,
// <home>/session-state/<session id>/events.jsonl: a transcript, as its
// agentStop hook names it (transcriptPath).
const SourceEvents = telemetry.SourceTranscript

// homeVar moves Copilot CLI's folder (state, hooks, logs): $COPILOT_HOME,
// else ~/.copilot.
const homeVar = "COPILOT_HOME"

// homeDir is Copilot CLI's folder for getenv, "" when neither
// COPILOT_HOME nor HOME is set.
func homeDir(getenv func(string) string) string {
	if h := getenv(homeVar); h != "" {
		return h
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".copilot")
	}
	return ""
}

func envHome(env []string) string {
	return homeDir(func(k string) string { return adapters.EnvValue(env, k) })
}

// stateDir is the folder of the session folders under home.
func stateDir(home string) string { return filepath.Join(home, "session-state") }

// eventsFile is the session file's name in its session folder.
const eventsFile = "events.jsonl"

// TelemetrySource implements adapters.Telemetry: the events.jsonl of the
// launch's session folder under $COPILOT_HOME (else ~/.copilot).
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src := adapters.TelemetrySource{Kind: SourceEvents}
	home := envHome(t.Env)
	if home == "" {
		return src, errors.New("telemetry: neither COPILOT_HOME nor HOME is set in the harness environment; cannot find Copilot CLI's session files")
	}
	src.Discoverer = &Discoverer{Home: home, Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID}
	src.NewParser = func() telemetry.Parser { return NewParser() }
	return src, nil
}

// Discoverer finds the session file of a Copilot CLI launch:
// <Home>/session-state/<id>/events.jsonl. With SessionID (the launch
// passed --session-id or --resume=ID) only that session's file matches,
// whenever it was born; otherwise a file born after Launch-Slack whose
// session.start records Cwd matches, and concurrent launches in one
// folder are kept apart by telemetry.Claims. The file appears with the
// first prompt (the session folder at launch).
type Discoverer struct {
	Home      string // $COPILOT_HOME, else ~/.copilot
	Cwd       string
	Launch    time.Time
	Slack     time.Duration // default: telemetry.BornBefore's
	SessionID string
	heads     telemetry.FileFacts[head]
}

// Roots implements telemetry.Discoverer.
func (d *Discoverer) Roots() []string { return []string{stateDir(d.Home)} }

// SourceKind implements telemetry.Discoverer.
func (d *Discoverer) SourceKind() telemetry.SourceKind { return SourceEvents }

// SkipFolder implements telemetry.FolderSkipper: with a session id, every
// session folder but its own.
func (d *Discoverer) SkipFolder(dir string) bool {
	return d.SessionID != "" && filepath.Dir(dir) == stateDir(d.Home) && filepath.Base(dir) != d.SessionID
}

// Candidates implements telemetry.Discoverer.
func (d *Discoverer) Candidates() ([]telemetry.Candidate, error) {
	var paths []string
	if d.SessionID != "" {
		paths = []string{filepath.Join(stateDir(d.Home), d.SessionID, eventsFile)}
	} else {
		var err error
		if paths, err = filepath.Glob(filepath.Join(stateDir(d.Home), "*", eventsFile)); err != nil {
			return nil, err
		}
	}
	cwds := telemetry.CwdSpellings(d.Cwd)
	var out []telemetry.Candidate
	for _, p := range paths {
		id := filepath.Base(filepath.Dir(p))
		if d.SessionID != "" {
			if born, ok := telemetry.BornAt(p); ok {
				out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: id})
			}
			continue
		}
		if born, ok := d.heads.Born(p); !ok || (!d.Launch.IsZero() && telemetry.BornBefore(born, d.Launch, d.Slack)) {
			continue
		}
		born, h, ok := d.heads.Of(p, readHead)
		if !ok || (d.Cwd != "" && !slices.Contains(cwds, filepath.Clean(h.cwd))) {
			continue
		}
		out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: id})
	}
	telemetry.SortCandidates(out)
	return out, nil
}

// head is what a new session file's first line, session.start, says.
type head struct{ id, cwd string }

// readHead reads the session.start line of a session file; false while it
// is incomplete or the file starts otherwise.
func readHead(path string) (head, bool) {
	f, err := os.Open(path)
	if err != nil {
		return head{}, false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 16<<10).ReadSlice('\n')
	if err != nil {
		return head{}, false
	}
	var r struct {
		Type string `json:"type"`
		Data struct {
			SessionID string `json:"sessionId"`
			Context   struct {
				Cwd string `json:"cwd"`
			} `json:"context"`
		} `json:"data"`
	}
	if json.Unmarshal(line, &r) != nil || r.Type != "session.start" {
		return head{}, false
	}
	return head{r.Data.SessionID, r.Data.Context.Cwd}, true
}
