package gemini

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
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

// SourceChat is the kind of Gemini CLI's session file, the chat file
// (<gemini home>/tmp/<project>/chats/session-*.jsonl): a transcript, as
// its hooks name it (transcript_path).
const SourceChat = telemetry.SourceTranscript

// Gemini CLI's variables lifeloop reads from the harness's environment.
const (
	// cliHomeVar moves the user folder: <GEMINI_CLI_HOME>/.gemini.
	cliHomeVar = "GEMINI_CLI_HOME"
)

// homeDir returns Gemini CLI's user folder: $GEMINI_CLI_HOME/.gemini, else
// $HOME/.gemini; "" when neither is set.
func homeDir(getenv func(string) string) string {
	if h := getenv(cliHomeVar); h != "" {
		return filepath.Join(h, ".gemini")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".gemini")
	}
	return ""
}

func envHome(env []string) string {
	return homeDir(func(k string) string { return adapters.EnvValue(env, k) })
}

// TelemetrySource implements adapters.Telemetry: the chat files under the
// harness environment's Gemini folder, measured against the compression
// point its settings give.
func (Harness) TelemetrySource(t adapters.TelemetryTarget) (adapters.TelemetrySource, error) {
	src := adapters.TelemetrySource{Kind: SourceChat}
	home := envHome(t.Env)
	if home == "" {
		return src, errors.New("telemetry: neither GEMINI_CLI_HOME nor HOME is set in the harness environment; cannot find Gemini CLI's chat files")
	}
	threshold := compressionThreshold(home, t.Cwd)
	src.Discoverer = &Discoverer{Home: home, Cwd: t.Cwd, Launch: t.LaunchedAt, SessionID: t.SessionID}
	src.NewParser = func() telemetry.Parser { return NewParser(threshold) }
	return src, nil
}

// Discoverer finds the chat file of a Gemini CLI launch:
// <Home>/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id[:8]>.jsonl.
// The project folder is a slug of the working folder's name (proj,
// proj-1, … on collisions, kept in <Home>/projects.json), so it is not
// derived: every project folder is listed and a file belongs to Cwd when
// its first line's projectHash is the SHA-256 of Cwd (measured with
// 0.61.0). When SessionID is known (the launch passed --session-id, or a
// hook named it) only the file whose first line carries that sessionId
// matches, whenever it was born; otherwise files born before Launch-Slack
// belong to other launches, and concurrent launches in one folder are kept
// apart by telemetry.Claims.
type Discoverer struct {
	Home      string // $GEMINI_CLI_HOME/.gemini, else ~/.gemini
	Cwd       string
	Launch    time.Time
	Slack     time.Duration // default: telemetry.BornBefore's
	SessionID string
	// chats holds each chat file's birth time and, once read, its first
	// line, neither of which changes: every scan lists the chat files of
	// every project. Without a session id, a file born before the launch
	// is read only when a newer one carries the same id in its name (a
	// session resumed in a later minute, below): the others are past
	// sessions.
	chats telemetry.FileFacts[head]
}

// Roots implements telemetry.Discoverer.
func (d *Discoverer) Roots() []string { return []string{filepath.Join(d.Home, "tmp")} }

// SourceKind implements telemetry.Discoverer.
func (d *Discoverer) SourceKind() telemetry.SourceKind { return SourceChat }

// ProjectHash is the projectHash Gemini CLI records for the working folder
// cwd: the hex SHA-256 of its path.
func ProjectHash(cwd string) string {
	sum := sha256.Sum256([]byte(cwd))
	return hex.EncodeToString(sum[:])
}

// Candidates implements telemetry.Discoverer.
func (d *Discoverer) Candidates() ([]telemetry.Candidate, error) {
	paths, err := filepath.Glob(filepath.Join(d.Home, "tmp", "*", "chats", "session-*.jsonl"))
	if err != nil {
		return nil, err
	}
	var hashes []string
	for _, c := range telemetry.CwdSpellings(d.Cwd) {
		hashes = append(hashes, ProjectHash(c))
	}
	if d.SessionID != "" {
		paths = slices.DeleteFunc(paths, func(p string) bool { return nameID(p) != prefix(d.SessionID, 8) })
	}
	var past map[string]bool // without a session id: files born before the launch, not read
	if d.SessionID == "" {
		past = map[string]bool{}
		recent := map[string]bool{} // the name ids of files born since
		for _, p := range paths {
			if born, ok := d.chats.Born(p); !ok || telemetry.BornBefore(born, d.Launch, d.Slack) {
				past[p] = true
			} else {
				recent[nameID(p)] = true
			}
		}
		for p := range past {
			if recent[nameID(p)] {
				delete(past, p) // a session resumed in a later minute: its first file
			}
		}
	}
	var all []telemetry.Candidate
	first := map[string]time.Time{} // each session's earliest file
	for _, p := range paths {
		if past[p] {
			continue
		}
		born, h, ok := d.chats.Of(p, readHead)
		if !ok || h.Kind == "subagent" || !slices.Contains(hashes, h.ProjectHash) {
			continue
		}
		if f, seen := first[h.SessionID]; !seen || born.Before(f) {
			first[h.SessionID] = born
		}
		all = append(all, telemetry.Candidate{Path: p, Born: born, SessionID: h.SessionID})
	}
	var out []telemetry.Candidate
	for _, c := range all {
		switch {
		case c.Born.After(first[c.SessionID]):
			// A session resumed in a later minute than its file's gets a
			// second file, named for that minute, holding only a header and
			// the session context; its turns go to the first file (measured
			// with 0.61.0). The conversation is the first file.
			continue
		case d.SessionID != "":
			if c.SessionID != d.SessionID {
				continue
			}
		case telemetry.BornBefore(c.Born, d.Launch, d.Slack):
			continue
		}
		out = append(out, c)
	}
	telemetry.SortCandidates(out)
	return out, nil
}

// nameID is the session id prefix a chat file's name ends with
// (session-<minute>-<id[:8]>.jsonl).
func nameID(path string) string {
	name := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	return name[strings.LastIndexByte(name, '-')+1:]
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// head is a chat file's first line.
type head struct {
	SessionID   string `json:"sessionId"`
	ProjectHash string `json:"projectHash"`
	StartTime   string `json:"startTime"`
	Kind        string `json:"kind"`
}

// readHead reads the first line of a chat file; false until it is
// complete.
func readHead(path string) (head, bool) {
	var h head
	f, err := os.Open(path)
	if err != nil {
		return h, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 16<<10)
	line, err := r.ReadSlice('\n')
	if err != nil {
		return h, false
	}
	if json.Unmarshal(line, &h) != nil || h.SessionID == "" {
		return h, false
	}
	return h, true
}

// Context windows (tokenLimit in Gemini CLI 0.61.0): 256 000 tokens for
// the Gemma 4 models, 1 048 576 for every other model.
const (
	windowDefault = 1_048_576
	windowGemma4  = 256_000
)

// defaultThreshold is Gemini CLI's compression threshold: it compresses
// the history before a prompt once the previous response's prompt tokens
// reach this fraction of the model's window.
const defaultThreshold = 0.5

// tokenLimit is the model's window.
func tokenLimit(model string) int64 {
	switch model {
	case "gemma-4-31b-it", "gemma-4-26b-a4b-it":
		return windowGemma4
	}
	return windowDefault
}

// compressionThreshold reads model.compressionThreshold from the user
// settings (<home>/settings.json) and the workspace settings
// (<cwd>/.gemini/settings.json, which win); defaultThreshold when neither
// sets a fraction in (0, 1]. Files with comments (the CLI strips them) and
// the root-owned system settings files are not read; a remote experiment
// can also change the threshold, which lifeloop cannot see.
func compressionThreshold(home, cwd string) float64 {
	th := defaultThreshold
	for _, p := range []string{filepath.Join(home, "settings.json"), filepath.Join(cwd, ".gemini", "settings.json")} {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var s struct {
			Model struct {
				CompressionThreshold float64 `json:"compressionThreshold"`
			} `json:"model"`
		}
		if json.Unmarshal(b, &s) == nil && s.Model.CompressionThreshold > 0 && s.Model.CompressionThreshold <= 1 {
			th = s.Model.CompressionThreshold
		}
	}
	return th
}
