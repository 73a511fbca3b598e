package qwen

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"
)

// SourceChat is the kind of Qwen Code's session file,
// <runtime>/projects/<sanitized cwd>/chats/<session id>.jsonl: a
// transcript of the session's records.
const SourceChat = telemetry.SourceTranscript

// runtimeDir is the folder Qwen Code keeps its session data in:
// $QWEN_RUNTIME_DIR, else $QWEN_HOME, else ~/.qwen (read from its
// package; only ~/.qwen is measured); "" when none is set.
func runtimeDir(getenv func(string) string) string {
	for _, k := range []string{"QWEN_RUNTIME_DIR", "QWEN_HOME"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".qwen")
	}
	return ""
}

// projectsDir is the folder of the per-project folders under root.
func projectsDir(root string) string { return filepath.Join(root, "projects") }

// TelemetrySource implements adapters.Telemetry: the chat file of the
// launch's session under the runtime folder (runtimeDir).
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src := adapters.TelemetrySource{Kind: SourceChat}
	root := runtimeDir(func(k string) string { return adapters.EnvValue(t.Env, k) })
	if root == "" {
		return src, errors.New("telemetry: none of QWEN_RUNTIME_DIR, QWEN_HOME and HOME is set in the harness environment; cannot find Qwen Code's session files")
	}
	src.Discoverer = &Discoverer{Root: root, Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID}
	src.NewParser = func() telemetry.Parser { return NewParser() }
	return src, nil
}

// Discoverer finds the chat file of a Qwen Code launch:
// <Root>/projects/<folder>/chats/<id>.jsonl. With SessionID (the launch
// passed --session-id or --resume ID) only that session's file matches,
// whenever it was born; otherwise a file born after Launch-Slack whose
// first record names Cwd matches, and concurrent launches in one folder
// are kept apart by telemetry.Claims. The file appears with the first
// prompt.
type Discoverer struct {
	Root      string // $QWEN_RUNTIME_DIR, $QWEN_HOME, else ~/.qwen
	Cwd       string
	Launch    time.Time
	Slack     time.Duration // default: telemetry.BornBefore's
	SessionID string
	heads     telemetry.FileFacts[string]
}

// Roots implements telemetry.Discoverer.
func (d *Discoverer) Roots() []string { return []string{projectsDir(d.Root)} }

// SourceKind implements telemetry.Discoverer.
func (d *Discoverer) SourceKind() telemetry.SourceKind { return SourceChat }

// Candidates implements telemetry.Discoverer.
func (d *Discoverer) Candidates() ([]telemetry.Candidate, error) {
	name := "*.jsonl"
	if d.SessionID != "" {
		name = d.SessionID + ".jsonl"
	}
	paths, err := filepath.Glob(filepath.Join(projectsDir(d.Root), "*", "chats", name))
	if err != nil {
		return nil, err
	}
	cwds := telemetry.CwdSpellings(d.Cwd)
	var out []telemetry.Candidate
	for _, p := range paths {
		id := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		if d.SessionID != "" {
			if born, ok := telemetry.BornAt(p); ok {
				out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: id})
			}
			continue
		}
		if born, ok := d.heads.Born(p); !ok || (!d.Launch.IsZero() && telemetry.BornBefore(born, d.Launch, d.Slack)) {
			continue
		}
		born, cwd, ok := d.heads.Of(p, readCwd)
		if !ok || (d.Cwd != "" && !slices.Contains(cwds, filepath.Clean(cwd))) {
			continue
		}
		out = append(out, telemetry.Candidate{Path: p, Born: born, SessionID: id})
	}
	telemetry.SortCandidates(out)
	return out, nil
}

// readCwd reads the cwd of a chat file's first record; false while the
// line is incomplete or names none.
func readCwd(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 64<<10).ReadSlice('\n')
	if err != nil {
		return "", false
	}
	var r struct {
		Cwd string `json:"cwd"`
	}
	if json.Unmarshal(line, &r) != nil || r.Cwd == "" {
		return "", false
	}
	return r.Cwd, true
}
