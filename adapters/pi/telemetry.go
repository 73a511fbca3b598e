package pi

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
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

// parser reads Pi session lines: {"type", "id", "parentId", "timestamp",
// ...}.
//
// Rules:
//   - session (the header): ObsHarnessSession with its id and cwd.
//   - model_change: remembers provider/modelId, whose window models.json
//     gives.
//   - message, role user: the n-th user message of the file. With no turn
//     open it opens one: ObsFrameOpening, frame id "<session id>#<n>" (the
//     hook bridge's extension numbers prompts the same way). Inside an
//     open turn (a steering message after a tool result) it is
//     ObsUserMessage.
//   - message, role assistant: the first of a turn is ObsFrameOpened (with
//     its model). Its usage is ObsUsage: Tokens = usage.totalTokens (else
//     input + output + cacheRead + cacheWrite; the size Pi itself compares
//     with the window to compact), Window = the model's contextWindow; a
//     failed call (zero usage) reports none. stopReason toolUse keeps the
//     turn open; stop, length and aborted end it (ObsFrameEnded, Trigger =
//     stopReason); error is ObsAPIError and ends the turn at the next user
//     message unless a retry answers first.
//   - compaction: ObsCompacted, PreTokens = tokensBefore, PostTokens 0
//     (unknown: Pi measures the compacted context only with the next
//     reply, whose usage then reports it), Trigger "extension" when
//     fromHook, else "harness" (Pi records no threshold/manual/overflow
//     reason in the file).
type parser struct {
	kind      telemetry.SourceKind
	fromHook  string // the trigger of a compaction marked fromHook
	windows   windows
	sessionID string
	model     string // provider/modelId
	users     int
	frame     string
	opened    bool
	failed    bool // the open turn's last call failed
}

func newParser(w windows) *parser {
	return &parser{kind: telemetry.SourceTranscript, fromHook: "extension", windows: w}
}

// NewEntryParser returns the parser of Pi's session entries (the rules
// above) for another harness that records the same entries: kind names
// its store in provenance, windows maps "provider/model" to the model's
// context window, and fromHook is the trigger of a compaction entry
// marked fromHook.
func NewEntryParser(kind telemetry.SourceKind, windows map[string]int64, fromHook string) telemetry.Parser {
	return &parser{kind: kind, fromHook: fromHook, windows: windows}
}

// SourceKind implements telemetry.Parser.
func (p *parser) SourceKind() telemetry.SourceKind { return p.kind }

type entry struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Cwd       string `json:"cwd"`
	Provider  string `json:"provider"`
	ModelID   string `json:"modelId"`
	Message   *struct {
		Role         string `json:"role"`
		Provider     string `json:"provider"`
		Model        string `json:"model"`
		StopReason   string `json:"stopReason"`
		ErrorMessage string `json:"errorMessage"`
		Usage        *struct {
			Input       *int64 `json:"input"`
			Output      *int64 `json:"output"`
			CacheRead   int64  `json:"cacheRead"`
			CacheWrite  int64  `json:"cacheWrite"`
			TotalTokens *int64 `json:"totalTokens"`
		} `json:"usage"`
	} `json:"message"`
	TokensBefore *int64 `json:"tokensBefore"`
	FromHook     bool   `json:"fromHook"`
}

// Parse implements telemetry.Parser.
func (p *parser) Parse(dst []telemetry.Observation, line []byte, src telemetry.Provenance) ([]telemetry.Observation, error) {
	var e entry
	if err := json.Unmarshal(line, &e); err != nil {
		return dst, err
	}
	if e.Type == "" {
		return dst, telemetry.ErrNotObject
	}
	base := telemetry.Observation{Source: src, At: telemetry.ParseTime(e.Timestamp), Model: p.modelName()}
	switch e.Type {
	case "session":
		if e.ID != "" && e.ID != p.sessionID {
			p.sessionID = e.ID
			o := base
			o.Kind = telemetry.ObsHarnessSession
			o.Cwd = e.Cwd
			dst = append(dst, p.stamp(o))
		}
	case "model_change":
		if e.Provider != "" && e.ModelID != "" {
			p.model = e.Provider + "/" + e.ModelID
		}
	case "message":
		if e.Message != nil {
			dst = p.message(dst, &e, base)
		}
	case "compaction":
		if e.TokensBefore == nil {
			return dst, fmt.Errorf("pi: compaction entry without tokensBefore")
		}
		o := base
		o.Kind = telemetry.ObsCompacted
		o.FrameID = p.frame
		o.Window = p.window()
		o.PreTokens = *e.TokensBefore
		o.Trigger = "harness"
		if e.FromHook {
			o.Trigger = p.fromHook
		}
		dst = append(dst, p.stamp(o))
	}
	return dst, nil
}

func (p *parser) message(dst []telemetry.Observation, e *entry, base telemetry.Observation) []telemetry.Observation {
	m := e.Message
	switch m.Role {
	case "user":
		p.users++
		if p.frame != "" && !p.failed {
			o := base
			o.Kind = telemetry.ObsUserMessage
			o.FrameID = p.frame
			return append(dst, p.stamp(o))
		}
		if p.frame != "" {
			dst = p.end(dst, base, "error")
		}
		p.frame, p.opened, p.failed = FrameID(p.sessionID, p.users), false, false
		o := base
		o.Kind = telemetry.ObsFrameOpening
		o.FrameID = p.frame
		o.Window = p.window()
		return append(dst, p.stamp(o))
	case "assistant":
		if m.Provider != "" && m.Model != "" {
			p.model = m.Provider + "/" + m.Model
			base.Model = p.modelName()
		}
		if p.frame != "" && !p.opened {
			p.opened = true
			o := base
			o.Kind = telemetry.ObsFrameOpened
			o.FrameID = p.frame
			o.Window = p.window()
			dst = append(dst, p.stamp(o))
		}
		if u := m.Usage; u == nil || (u.TotalTokens == nil && u.Input == nil && u.Output == nil) {
			// 0.73.1 records usage (zeros for a failed call) on every
			// assistant message: one without is a format this parser no
			// longer reads, and pressure goes blind.
			o := base
			o.Kind = telemetry.ObsUnreadable
			o.FrameID = p.frame
			o.Detail = "an assistant message without a readable usage (totalTokens, input, output)"
			dst = append(dst, p.stamp(o))
		} else {
			tokens := deref(u.TotalTokens)
			if tokens == 0 {
				tokens = deref(u.Input) + deref(u.Output) + u.CacheRead + u.CacheWrite
			}
			if tokens > 0 {
				o := base
				o.Kind = telemetry.ObsUsage
				o.FrameID = p.frame
				o.Tokens = tokens
				o.Window = p.window()
				dst = append(dst, p.stamp(o))
			}
		}
		switch m.StopReason {
		case "toolUse":
			p.failed = false
		case "error":
			p.failed = true
			o := base
			o.Kind = telemetry.ObsAPIError
			o.FrameID = p.frame
			dst = append(dst, p.stamp(o))
		default:
			if p.frame != "" {
				dst = p.end(dst, base, m.StopReason)
			}
		}
	}
	return dst
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// end closes the open turn.
func (p *parser) end(dst []telemetry.Observation, base telemetry.Observation, reason string) []telemetry.Observation {
	o := base
	o.Kind = telemetry.ObsFrameEnded
	o.FrameID = p.frame
	o.Trigger = reason
	p.frame, p.opened, p.failed = "", false, false
	return append(dst, p.stamp(o))
}

func (p *parser) stamp(o telemetry.Observation) telemetry.Observation {
	o.HarnessSessionID = p.sessionID
	return o
}

// window is the current model's contextWindow, 0 when unknown.
func (p *parser) window() int64 { return p.windows[p.model] }

// modelName is the current model id without its provider.
func (p *parser) modelName() string {
	_, id, _ := strings.Cut(p.model, "/")
	return id
}

// FrameID is the frame id of the n-th user message (1-based) of Pi
// session sessionID: "<sessionID>#<n>".
func FrameID(sessionID string, n int) string { return fmt.Sprintf("%s#%d", sessionID, n) }
