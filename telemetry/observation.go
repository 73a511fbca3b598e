package telemetry

import (
	"errors"
	"time"
)

// ObsKind says what an [Observation] reports.
type ObsKind string

// Observation kinds. The parser kinds come from transcript lines; the
// source kinds come from the tailer and discovery; ObsPressure comes from
// the [PressureTracker].
const (
	// ObsHarnessSession: the harness's own session (or thread) id was
	// seen for the first time or changed.
	ObsHarnessSession ObsKind = "harness_session"
	// ObsFrameOpening: a turn was requested (a real user prompt).
	ObsFrameOpening ObsKind = "frame_opening"
	// ObsFrameOpened: the harness started working on the turn.
	ObsFrameOpened ObsKind = "frame_opened"
	// ObsFrameEnded: the turn finished; Trigger holds the stop reason.
	ObsFrameEnded ObsKind = "frame_ended"
	// ObsUserMessage: a user message inside an open turn.
	ObsUserMessage ObsKind = "user_message"
	// ObsUsage: context tokens in use (Tokens) of Window.
	ObsUsage ObsKind = "usage"
	// ObsCompacted: the harness compacted its context.
	ObsCompacted ObsKind = "compacted"
	// ObsAPIError: the harness recorded a model API error; Trigger holds
	// its error code when the line has one.
	ObsAPIError ObsKind = "api_error"
	// ObsPressure: the pressure level changed (see [PressureChange]).
	ObsPressure ObsKind = "pressure"
	// ObsUnreadable: a line of a kind the parser expects to understand
	// (e.g. a model reply with its token usage) no longer has the shape
	// it reads; Detail says what could not be read. It signals harness
	// drift: a release that changed its format. Record kinds the parser
	// does not know are not reported (they are harmless).
	ObsUnreadable ObsKind = "unreadable"

	// ObsSourceFound: discovery picked a file (Source.Path); also emitted
	// when a [Follower] switches to a newer file.
	ObsSourceFound ObsKind = "source_found"
	// ObsSourceNotFound: discovery found no file within its bound.
	ObsSourceNotFound ObsKind = "source_not_found"
	// ObsSourceMode: how the source is watched (Trigger = fsnotify|poll,
	// Detail explains a fallback).
	ObsSourceMode ObsKind = "source_mode"
	// ObsSourceTruncated: the file shrank; it is re-read from offset 0.
	ObsSourceTruncated ObsKind = "source_truncated"
	// ObsSourceReplaced: the path names a new file; read from offset 0.
	ObsSourceReplaced ObsKind = "source_replaced"
	// ObsSourceDeleted: the file was deleted (telemetry source lost).
	ObsSourceDeleted ObsKind = "source_deleted"
	// ObsSourceAppeared: the file exists again after a deletion.
	ObsSourceAppeared ObsKind = "source_appeared"
	// ObsSourceError: a read error the watcher survived (Detail).
	ObsSourceError ObsKind = "source_error"
)

// SourceKind names the kind of file an observation came from.
type SourceKind string

// SourceTranscript is the kind of a session file whose harness names no
// other; a harness names its own kind (TelemetrySource.Kind).
const SourceTranscript SourceKind = "transcript"

// Provenance says where an observation came from.
type Provenance struct {
	Path string
	// Line is the 1-based line number within the current file generation.
	Line int64
	// Offset is the byte offset of the line's first byte.
	Offset int64
	Kind   SourceKind
}

// Evidence counts lines that could not be used since the previous
// observation was delivered.
type Evidence struct {
	InvalidLines  int64 // not JSON, or JSON the parser could not use
	OverlongLines int64 // longer than MaxLine, skipped
}

// Observation is one fact read from a harness's telemetry.
type Observation struct {
	Kind             ObsKind
	HarnessSessionID string
	// HarnessVersion is the harness version the file records (on or
	// before this line), "" when it records none.
	HarnessVersion string
	FrameID        string
	// ParentFrameID is set on subcall frames (a side conversation).
	ParentFrameID string
	// Tokens is the context in use (ObsUsage, ObsPressure).
	Tokens int64
	// Window is the effective context window, 0 when unknown.
	Window int64
	// Trigger is the compaction trigger (auto|manual), the stop reason on
	// ObsFrameEnded, the error code on ObsAPIError, the mode on
	// ObsSourceMode.
	Trigger    string
	PreTokens  int64
	PostTokens int64
	Model      string
	// Cwd is the working folder the harness recorded.
	Cwd string
	// Level, Previous and Percent are set on ObsPressure.
	Level    Level
	Previous Level
	Percent  float64
	// Detail is a short human-readable note (never a payload body).
	Detail string
	// ID identifies an ObsCompacted in the harness's own records (the
	// record that requested it), so that a hook's report of the same
	// compaction is recognized; "" when the records give none.
	ID     string
	Source Provenance
	// At is the line's own timestamp when it has one.
	At time.Time
	// Evidence counts unusable lines seen before this observation.
	Evidence Evidence
}

// Parser turns one line of a harness file into observations. Parsers keep
// state across lines (open frames, last usage) and are not safe for
// concurrent use. A parser returns an error for a line it cannot use; the
// caller counts such lines as evidence.
type Parser interface {
	// Parse appends the observations of line to dst and returns it. line
	// is only valid during the call (Watch reuses its memory): a parser
	// that keeps any of it copies it.
	Parse(dst []Observation, line []byte, src Provenance) ([]Observation, error)
	// SourceKind names the files this parser reads.
	SourceKind() SourceKind
}

// ErrNotObject is what a parser returns for a line that is not a JSON
// object.
var ErrNotObject = errors.New("telemetry: line is not a JSON object")

// ParseTime parses an RFC 3339 timestamp; the zero time when s is empty
// or not one.
func ParseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t
}
