package adapters

import "time"

// UsageReader is implemented by a harness whose session files record the
// tokens of each model call: `lifeloop usage` lists its files and reads
// them through it (docs/usage.md).
type UsageReader interface {
	// UsageFiles lists the harness's session files on this machine, the
	// folders found through getenv (HOME and the harness's own
	// variables); none when the folders do not exist.
	UsageFiles(getenv func(string) string) ([]string, error)
	// NewUsageParser returns a parser for the file at path that resumes
	// from state (what a previous parser's State returned at the offset
	// reading resumes from; nil for a file read from its start).
	NewUsageParser(path string, state []byte) UsageParser
}

// UsageParser turns a session file's lines into model calls.
type UsageParser interface {
	// Parse appends the model calls line records to dst. line is only
	// valid during the call. An error says the line could not be read.
	Parse(dst []UsageEntry, line []byte) ([]UsageEntry, error)
	// State is what a parser needs to resume after the last line parsed
	// (nil when it needs nothing).
	State() []byte
}

// UsageLineFilter is a UsageParser that passes over most lines by their
// bytes alone. Kept reports whether Parse could count a call in line or
// change the parser's state; for a line it does not keep, Parse would
// append nothing, and err is the error Parse would return. Kept reads
// nothing Parse writes, so a reader may run it ahead of Parse on
// another goroutine; ParseKept is Parse for a line Kept kept.
type UsageLineFilter interface {
	UsageParser
	Kept(line []byte) (kept bool, err error)
	ParseKept(dst []UsageEntry, line []byte) ([]UsageEntry, error)
}

// UsageTokens are the tokens of a model call as the harness reports
// them. Input excludes the cached tokens (CacheRead, CacheWrite); Output
// includes Reasoning where the harness counts reasoning as output (it
// says so in its UsageReader's doc).
type UsageTokens struct {
	Input, CacheRead, CacheWrite, Output, Reasoning int64
}

// Add adds o to t.
func (t *UsageTokens) Add(o UsageTokens) {
	t.Input += o.Input
	t.CacheRead += o.CacheRead
	t.CacheWrite += o.CacheWrite
	t.Output += o.Output
	t.Reasoning += o.Reasoning
}

// Total is every token of t once (Reasoning is part of Output).
func (t UsageTokens) Total() int64 { return t.Input + t.CacheRead + t.CacheWrite + t.Output }

// UsageEntry is one model call a session file records.
type UsageEntry struct {
	At        time.Time
	SessionID string
	// Project names the project the call worked in (a folder).
	Project string
	Model   string
	// Provider is the model's provider when the file names it.
	Provider string
	// Key identifies the call across files (a call a file repeats, or
	// another file copies, is counted once); "" when the file gives no
	// identity.
	Key     string
	FrameID string
	Tokens  UsageTokens
	// Cost is the cost in US dollars the harness recorded itself, valid
	// when HasCost.
	Cost    float64
	HasCost bool
}
