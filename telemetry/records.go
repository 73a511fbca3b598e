package telemetry

import (
	"context"
	"os"
)

// RecordSource is a [Discoverer] whose sessions are not files of lines
// (a harness that keeps them as rows of a database, say). Its candidates'
// paths name a session inside that store; [Watch] hands a candidate's
// path to Follow instead of [Tail], and the harness's [Parser] reads the
// records Follow delivers as lines.
type RecordSource interface {
	Discoverer
	// Follow reads the session cfg.Path names from its first record and
	// then every record added later, in order, until ctx ends, with the
	// same contract as [Tail]: an EventMode first, one EventLine per record
	// (Line holds the record as one JSON value, LineNo its 1-based position
	// in the session, Offset the store's own position of it), and
	// EventDeleted, EventAppeared and EventError when the store goes, comes
	// back or cannot be read. It returns nil when ctx is cancelled.
	Follow(ctx context.Context, cfg TailConfig, sink func(TailEvent)) error
}

// SourceResolver is a [RecordSource] that can name one of its sessions
// from a path a person gives (`lifeloop watch FILE`) and say where a
// session ends now: what a file's size is to a file.
type SourceResolver interface {
	RecordSource
	// Resolve returns the session path names: path itself when it names
	// a session, or, when it names the store, the store's newest session
	// the discoverer matches. An error says what to give instead.
	Resolve(path string) (string, error)
	// End returns the offset (in the Offsets Follow reports) just past
	// the session's last record now; 0 for a session with none.
	End(path string) (int64, error)
}

// SourceEnd resolves path through d when d is a [SourceResolver] and
// returns the source to follow and where it ends now: for a file, path
// itself and its size.
func SourceEnd(d Discoverer, path string) (string, int64, error) {
	if r, ok := d.(SourceResolver); ok {
		p, err := r.Resolve(path)
		if err != nil {
			return "", 0, err
		}
		end, err := r.End(p)
		if err != nil {
			return "", 0, err
		}
		return p, end, nil
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", 0, err
	}
	return path, fi.Size(), nil
}
