package pi

import (
	"bufio"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// Pi's environment variables lifeloop reads from the harness's
// environment.
const (
	agentDirVar   = "PI_CODING_AGENT_DIR"
	sessionDirVar = "PI_CODING_AGENT_SESSION_DIR"
)

// defaultWindow is the contextWindow Pi gives a models.json model that
// declares none (docs/models.md).
const defaultWindow = 128000

// TelemetrySource implements adapters.Telemetry: the session file under
// $PI_CODING_AGENT_SESSION_DIR, else <agent dir>/sessions/--<cwd>--/, with
// the model windows of <agent dir>/models.json (agent dir:
// $PI_CODING_AGENT_DIR, else $HOME/.pi/agent).
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	agent := agentDir(t.Env)
	if agent == "" {
		return adapters.TelemetrySource{}, errors.New("telemetry: neither PI_CODING_AGENT_DIR nor HOME is set in the harness environment; cannot find Pi's session files")
	}
	windows := readWindows(filepath.Join(agent, "models.json"))
	// Under `lifeloop run` with the hook bridge the extension names the
	// session file in the pointer, which BridgeArgs created (empty); without
	// it, discovery goes by order.
	var pointer string
	if dir := adapters.EnvValue(t.Env, "LIFELOOP_SESSION_DIR"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, sessionPointer)); err == nil {
			pointer = filepath.Join(dir, sessionPointer)
		}
	}
	return adapters.TelemetrySource{
		Kind: telemetry.SourceTranscript,
		Discoverer: &discoverer{
			AgentDir: agent, SessionDir: adapters.EnvValue(t.Env, sessionDirVar),
			Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID, Pointer: pointer,
		},
		NewParser: func() telemetry.Parser { return newParser(windows) },
	}, nil
}

// agentDir is Pi's configuration folder for the environment env, "" when
// neither PI_CODING_AGENT_DIR nor HOME is set.
func agentDir(env []string) string {
	if d := adapters.EnvValue(env, agentDirVar); d != "" {
		return d
	}
	if h := adapters.EnvValue(env, "HOME"); h != "" {
		return filepath.Join(h, ".pi", "agent")
	}
	return ""
}

// SessionDirName is the folder Pi 0.73.1 keeps a working folder's
// sessions in under <agent dir>/sessions (getDefaultSessionDir): cwd
// without its leading /, every / \ and : turned into -, between "--" and
// "--". The rule is lossy: /a-b and /a/b share a folder, which is why
// discovery also checks the cwd each file's header records.
func SessionDirName(cwd string) string {
	name := strings.TrimPrefix(cwd, "/")
	name = strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(name)
	return "--" + name + "--"
}

// discoverer finds the session file of a Pi launch.
//
// Under `lifeloop run` with the hook bridge, Pointer (a file in the
// lifeloop session folder) holds the path of the session file the bridge
// extension saw at session start: that file only, once it exists (nothing
// before the extension has written the pointer). A known
// SessionID (the header's id, also the file name's suffix) picks its file.
// Otherwise every *.jsonl of the cwd's session folder born at or after
// Launch-Slack whose header records the cwd matches, oldest first;
// concurrent launches in one folder are then told apart by order only
// (telemetry.Claims: each takes the oldest file nobody else holds), which
// can swap launches that overlap.
type discoverer struct {
	AgentDir   string // PI_CODING_AGENT_DIR, else ~/.pi/agent
	SessionDir string // PI_CODING_AGENT_SESSION_DIR: files directly in it
	Cwd        string
	Launch     time.Time
	Slack      time.Duration // default: telemetry.BornBefore's
	SessionID  string
	Pointer    string // LIFELOOP_SESSION_DIR/pi-session-file, "" outside `lifeloop run`
	headers    telemetry.FileFacts[sessionHeader]
}

// pointed returns the session file Pointer names, "" when none (yet).
func (d *discoverer) pointed() string {
	data, err := os.ReadFile(d.Pointer)
	if err != nil || len(data) > 4096 {
		return ""
	}
	if p := strings.TrimSpace(string(data)); filepath.IsAbs(p) && strings.HasSuffix(p, ".jsonl") {
		return p
	}
	return ""
}

// Dirs returns the folders the launch's file can be in.
func (d *discoverer) Dirs() []string {
	if d.Pointer != "" {
		if p := d.pointed(); p != "" {
			return []string{filepath.Dir(p)}
		}
	}
	if d.SessionDir != "" {
		return []string{d.SessionDir}
	}
	var out []string
	for _, cwd := range telemetry.CwdSpellings(d.Cwd) {
		p := filepath.Join(d.AgentDir, "sessions", SessionDirName(cwd))
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Roots implements telemetry.Discoverer.
func (d *discoverer) Roots() []string { return d.Dirs() }

// SourceKind implements telemetry.Discoverer.
func (d *discoverer) SourceKind() telemetry.SourceKind { return telemetry.SourceTranscript }

// Candidates implements telemetry.Discoverer.
func (d *discoverer) Candidates() ([]telemetry.Candidate, error) {
	var out []telemetry.Candidate
	if d.Pointer != "" {
		// The bridge extension names the file at session start, before
		// Pi writes it: until then there is no candidate.
		p := d.pointed()
		if p == "" {
			return nil, nil
		}
		if born, ok := telemetry.BornAt(p); ok {
			if id, _, ok := header(p); ok && (d.SessionID == "" || id == d.SessionID) {
				out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: id})
			}
		}
		return out, nil
	}
	cwds := telemetry.CwdSpellings(d.Cwd)
	for _, dir := range d.Dirs() {
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, err
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".jsonl") {
				continue
			}
			p := filepath.Join(dir, name)
			born, h, ok := d.headers.Of(p, readSessionHeader)
			if !ok || !slices.Contains(cwds, filepath.Clean(h.cwd)) {
				continue
			}
			if d.SessionID != "" {
				if h.id != d.SessionID {
					continue
				}
			} else if !d.Launch.IsZero() && telemetry.BornBefore(born, d.Launch, d.Slack) {
				continue
			}
			out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: h.id})
		}
	}
	telemetry.SortCandidates(out)
	return out, nil
}

// header reads the session header of a file's first line: {"type":
// "session", "id", "cwd", ...}; ok is false while the line is incomplete.
func header(path string) (id, cwd string, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", "", false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 16<<10)
	line, err := r.ReadSlice('\n')
	if err != nil {
		return "", "", false
	}
	var h struct {
		Type string `json:"type"`
		ID   string `json:"id"`
		Cwd  string `json:"cwd"`
	}
	if json.Unmarshal(line, &h) != nil || h.Type != "session" {
		return "", "", false
	}
	return h.ID, h.Cwd, true
}

// sessionHeader is what a session file's first line says.
type sessionHeader struct{ id, cwd string }

// readSessionHeader is header for telemetry.FileFacts.
func readSessionHeader(path string) (sessionHeader, bool) {
	id, cwd, ok := header(path)
	return sessionHeader{id, cwd}, ok
}

// telemetrySource is the kind of file Pi's session file is.
const telemetrySource = telemetry.SourceTranscript

// windows maps "provider/model" to the model's contextWindow.
type windows map[string]int64

// readWindows reads the custom models of Pi's models.json:
// {"providers":{NAME:{"models":[{"id","contextWindow"}]}}}. Pi's built-in
// models are not in a file lifeloop reads; their window stays unknown.
func readWindows(path string) windows {
	out := windows{}
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	var f struct {
		Providers map[string]struct {
			Models []struct {
				ID            string `json:"id"`
				ContextWindow int64  `json:"contextWindow"`
			} `json:"models"`
		} `json:"providers"`
	}
	if json.Unmarshal(data, &f) != nil {
		return out
	}
	for p, prov := range f.Providers {
		for _, m := range prov.Models {
			w := m.ContextWindow
			if w <= 0 {
				w = defaultWindow
			}
			out[p+"/"+m.ID] = w
		}
	}
	return out
}

// newParser is the parser of Pi's session file: the kit's session-entry
// parser (kit.NewEntryParser; Pi's format, which OpenClaw records too)
// reading a transcript, with "extension" the trigger of a compaction an
// extension asked for.
func newParser(w windows) telemetry.Parser {
	return kit.NewEntryParser(telemetrySource, w, "extension")
}

// FrameID is the frame id of the n-th user message (1-based) of Pi
// session sessionID: "<sessionID>#<n>" (kit.FrameID).
func FrameID(sessionID string, n int) string { return kit.FrameID(sessionID, n) }
