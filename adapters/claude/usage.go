package claude

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// UsageFiles implements adapters.UsageReader: every *.jsonl under
// projects/ of each configuration folder — $CLAUDE_CONFIG_DIR (a comma
// list), else $XDG_CONFIG_HOME/claude (else ~/.config/claude) and
// ~/.claude — subagents' files included.
func (Harness) UsageFiles(getenv func(string) string) ([]string, error) {
	var files []string
	for _, dir := range usageDirs(getenv) {
		root := filepath.Join(dir, "projects")
		found, err := kit.FindFiles(root, func(p string) bool { return strings.HasSuffix(p, ".jsonl") })
		files = append(files, found...)
		if err != nil {
			return files, err
		}
	}
	return files, nil
}

func usageDirs(getenv func(string) string) []string {
	if v := getenv(configDirVar); v != "" {
		var dirs []string
		for _, d := range strings.Split(v, ",") {
			if d = strings.TrimSpace(d); d != "" {
				dirs = append(dirs, d)
			}
		}
		return dirs
	}
	home := getenv("HOME")
	xdg := getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var dirs []string
	if xdg != "" {
		dirs = append(dirs, filepath.Join(xdg, "claude"))
	}
	if home != "" {
		dirs = append(dirs, filepath.Join(home, ".claude"))
	}
	return dirs
}

// NewUsageParser implements adapters.UsageReader. Every assistant line
// with a message.usage is a model call, sidechain (subagent) lines included, the "<synthetic>"
// model's excepted. Input is usage.input_tokens (without the cache),
// CacheWrite cache_creation_input_tokens, CacheRead
// cache_read_input_tokens, Output output_tokens (Claude reports no
// reasoning apart). Key is message.id and requestId when the line has
// both (the harness writes one line per content block, each with the
// same usage), else "". Project is the folder under projects/ the file
// lies in. Each line names its session, so a parser keeps no state.
//
// A line without the bytes _tokens" (a usage names input_tokens and
// output_tokens) records no tokens and is skipped unparsed: most of a
// transcript's bytes are tool results and prompts, and these bytes,
// rare in them, are found several times faster than "usage". The turns
// those lines open are not followed, so FrameID is "". A skipped line is
// unreadable only when it does not begin with { and end with }.
//
// A line with those bytes is read by a fast pass (scanUsageLine) that
// takes only the fields of a call and skips the rest by quotes and
// brackets; what it cannot settle goes to the transcript's parser. A
// line repeating the call of the line before (the same Key) gives none.
func (Harness) NewUsageParser(path string, _ []byte) adapters.UsageParser {
	return &usageParser{project: projectOf(path)}
}

// projectOf is the folder directly under projects/ that holds path.
func projectOf(path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "projects" && i+1 < len(parts)-1 {
			return parts[i+1]
		}
	}
	return filepath.Base(filepath.Dir(path))
}

// usageParser passes over lines by their bytes.
var _ adapters.UsageLineFilter = (*usageParser)(nil)

type usageParser struct {
	p       *parser // the transcript's parser, made for the first line the fast pass leaves
	project string
	obs     []telemetry.Observation // reused between lines
	// The previous call's identity, session, time and model: the harness
	// writes one line per content block of a reply, each repeating them.
	lastKey, lastSession, lastTS, lastModel []byte
	key                                     []byte // the line's identity, reused
	session, model                          string
	at                                      time.Time
}

func (u *usageParser) State() []byte { return nil }

var errNotAnObject = errors.New("not a JSON object")

// usageKey is what every line holding tokens contains.
var usageKey = []byte(`_tokens"`)

func (u *usageParser) Parse(dst []adapters.UsageEntry, data []byte) ([]adapters.UsageEntry, error) {
	if kept, err := u.Kept(data); !kept {
		return dst, err
	}
	return u.ParseKept(dst, data)
}

// Kept implements adapters.UsageLineFilter: a line holding the bytes
// _tokens" is kept.
func (u *usageParser) Kept(data []byte) (bool, error) {
	if bytes.Contains(data, usageKey) {
		return true, nil
	}
	if t := bytes.TrimSpace(data); len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return false, errNotAnObject
	}
	return false, nil
}

// ParseKept implements adapters.UsageLineFilter.
func (u *usageParser) ParseKept(dst []adapters.UsageEntry, data []byte) ([]adapters.UsageEntry, error) {
	var l usageLine
	if !scanUsageLine(data, &l) {
		return u.parseWhole(dst, data)
	}
	if string(l.typ) != "assistant" || !l.hasMessage || !l.hasUsage || !l.usageRead || string(l.model) == syntheticModel {
		return dst, nil
	}
	var key []byte
	if len(l.msgID) > 0 && len(l.requestID) > 0 {
		u.key = append(append(append(u.key[:0], l.msgID...), ':'), l.requestID...)
		key = u.key
		if bytes.Equal(key, u.lastKey) {
			// The same call as the line before: counted once anyway.
			return dst, nil
		}
	}
	return append(dst, u.entry(key, l.sessionID, l.timestamp, l.model, adapters.UsageTokens{Input: l.input, CacheWrite: l.cc, CacheRead: l.cr, Output: l.out})), nil
}

// parseWhole reads a line the fast pass left alone through the
// transcript's own parser.
func (u *usageParser) parseWhole(dst []adapters.UsageEntry, data []byte) ([]adapters.UsageEntry, error) {
	if u.p == nil {
		u.p = newParser(windowConfig{})
	}
	obs, err := u.p.Parse(u.obs[:0], data, telemetry.Provenance{})
	u.obs = obs
	if err != nil {
		return dst, err
	}
	l := &u.p.l
	if string(l.typ) != "assistant" || !l.hasMessage || !l.hasUsage || !l.usageRead || string(l.model) == syntheticModel {
		return dst, nil
	}
	var key []byte
	if len(l.msgID) > 0 && len(l.requestID) > 0 {
		u.key = append(append(append(u.key[:0], l.msgID...), ':'), l.requestID...)
		key = u.key
	}
	return append(dst, u.entry(key, l.sessionID, l.timestamp, l.model, adapters.UsageTokens{Input: l.input, CacheWrite: l.cc, CacheRead: l.cr, Output: l.out})), nil
}

// entry makes a call's entry, reusing the strings of the line before
// when they repeat.
func (u *usageParser) entry(key, session, ts, model []byte, t adapters.UsageTokens) adapters.UsageEntry {
	u.lastKey = append(u.lastKey[:0], key...)
	if !bytes.Equal(session, u.lastSession) || u.session == "" {
		u.lastSession = append(u.lastSession[:0], session...)
		u.session = string(session)
	}
	if !bytes.Equal(ts, u.lastTS) || len(ts) == 0 {
		u.lastTS = append(u.lastTS[:0], ts...)
		u.at = telemetry.ParseTime(string(ts))
	}
	if !bytes.Equal(model, u.lastModel) || u.model == "" {
		u.lastModel = append(u.lastModel[:0], model...)
		u.model = string(model)
	}
	return adapters.UsageEntry{At: u.at, SessionID: u.session, Project: u.project, Model: u.model, Key: string(key), Tokens: t}
}
