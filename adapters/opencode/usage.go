package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

var _ adapters.UsageStreamer = Harness{}

// UsageDatabases implements adapters.UsageStore: $OPENCODE_DB when set,
// and every opencode*.db of the data folder ($XDG_DATA_HOME/opencode,
// else ~/.local/share/opencode: each release channel has its own).
func (Harness) UsageDatabases(getenv func(string) string) ([]string, error) {
	var env []string
	for _, k := range []string{"XDG_DATA_HOME", "HOME", "OPENCODE_DB"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	var out []string
	if p := DatabasePath(env); p != "" {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	if data := DataDir(env); data != "" {
		found, err := filepath.Glob(filepath.Join(data, "opencode*.db"))
		if err != nil {
			return out, err
		}
		for _, p := range found {
			if !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// UsageSince implements adapters.UsageStore over the event table, the
// session's append-only log: each message.updated.1 event of an
// assistant message with a completion time is a model call (OpenCode
// writes the message again as it changes; Key, the message id, counts
// it once). Tokens as OpenCode records them: tokens.input is the input
// without the cache, cache.read and cache.write the cached input,
// tokens.output excludes tokens.reasoning (OpenCode bills reasoning at
// the output price), so Output is output + reasoning. The cost is
// native: OpenCode prices each call from its model's configured cost —
// unless it is 0 for a call with tokens (a model with no cost
// configured), then it is left to the price table. Project is the
// message's path.cwd, FrameID its parent (the user message opening the
// turn, the telemetry's frame id). For a database the mark is the event
// row's rowid; for a session ("<database>#<session id>") its seq.
func (h Harness) UsageSince(ctx context.Context, source string, mark int64, dst []adapters.UsageEntry) ([]adapters.UsageEntry, int64, error) {
	next, err := h.EachUsageSince(ctx, source, mark, func(e *adapters.UsageEntry) { dst = append(dst, *e) })
	return dst, next, err
}

// EachUsageSince implements adapters.UsageStreamer: UsageSince's calls,
// one at a time.
func (Harness) EachUsageSince(ctx context.Context, source string, mark int64, each func(*adapters.UsageEntry)) (int64, error) {
	dbPath, id := source, ""
	if d, s, err := splitSessionPath(source); err == nil {
		dbPath, id = d, s
	}
	db, err := kit.OpenReadOnly(dbPath)
	if err != nil {
		return mark, err
	}
	defer func() { _ = db.Close() }()
	col, where, args := "rowid", "", []any(nil)
	if id != "" {
		col, where, args = "seq", " AND aggregate_id = ?", []any{id}
	}
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT max("+col+") FROM event WHERE 1"+where, args...).Scan(&last); err != nil {
		if isMissingSchema(err) {
			return mark, nil
		}
		return mark, err
	}
	if !last.Valid {
		return 0, nil
	}
	if last.Int64+1 < mark {
		mark = 0 // the database was made anew
	}
	next := max(mark, last.Int64+1)
	rows, err := db.QueryContext(ctx, "SELECT "+col+", data FROM event WHERE type = 'message.updated.1' AND "+col+" >= ?"+where+" ORDER BY "+col,
		append([]any{mark}, args...)...)
	if err != nil {
		return mark, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var at int64
		var data sql.RawBytes // valid until the next row: read at once
		if err := rows.Scan(&at, &data); err != nil {
			return mark, err
		}
		next = max(next, at+1)
		if e, ok := usageOfMessage(data); ok {
			each(&e)
		}
	}
	if err := rows.Err(); err != nil {
		return mark, err
	}
	return next, nil
}

// messageEvent is what a usage read takes of a message.updated.1 event.
type messageEvent struct {
	Info struct {
		ID         string `json:"id"`
		SessionID  string `json:"sessionID"`
		Role       string `json:"role"`
		ParentID   string `json:"parentID"`
		ModelID    string `json:"modelID"`
		ProviderID string `json:"providerID"`
		Time       struct {
			Completed int64 `json:"completed"`
		} `json:"time"`
		Path struct {
			Cwd string `json:"cwd"`
		} `json:"path"`
		Cost   float64 `json:"cost"`
		Tokens struct {
			Input     int64 `json:"input"`
			Output    int64 `json:"output"`
			Reasoning int64 `json:"reasoning"`
			Cache     struct {
				Read  int64 `json:"read"`
				Write int64 `json:"write"`
			} `json:"cache"`
		} `json:"tokens"`
	} `json:"info"`
}

// usageOfMessage is the model call of a completed assistant message.
func usageOfMessage(data []byte) (adapters.UsageEntry, bool) {
	if !strings.Contains(string(data), `"assistant"`) {
		return adapters.UsageEntry{}, false
	}
	var ev messageEvent
	if json.Unmarshal(data, &ev) != nil {
		return adapters.UsageEntry{}, false
	}
	m := &ev.Info
	if m.Role != "assistant" || m.Time.Completed == 0 || m.ID == "" {
		return adapters.UsageEntry{}, false
	}
	t := m.Tokens
	e := adapters.UsageEntry{
		At: time.UnixMilli(m.Time.Completed), SessionID: m.SessionID, Project: m.Path.Cwd,
		Model: m.ModelID, Provider: m.ProviderID, Key: m.ID, FrameID: m.ParentID,
		Tokens: adapters.UsageTokens{Input: t.Input, CacheRead: t.Cache.Read, CacheWrite: t.Cache.Write, Output: t.Output + t.Reasoning, Reasoning: t.Reasoning},
	}
	if m.Cost > 0 || e.Tokens.Total() == 0 {
		e.Cost, e.HasCost = m.Cost, true
	}
	return e, true
}
