package telemetry

import "context"

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
