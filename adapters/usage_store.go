package adapters

import "context"

// UsageStore is implemented by a harness whose usage lives in a database,
// not in lines of files: it yields the model calls recorded since a mark.
// `lifeloop usage` lists its databases and keeps a mark per database in
// its index; a wrapped session's meter reads the session its telemetry
// follows (docs/usage.md).
type UsageStore interface {
	// UsageDatabases lists the harness's databases on this machine, the
	// folders found through getenv (HOME and the harness's own
	// variables); none when they do not exist.
	UsageDatabases(getenv func(string) string) ([]string, error)
	// UsageSince appends to dst the model calls source recorded from
	// mark on, and returns the mark the next call passes. source is a
	// database UsageDatabases listed (mark: a row of the whole database,
	// 0 for its first), or a path the harness's telemetry follows, one
	// session of a database (mark: the telemetry's offset in it). A mark
	// past source's last row (a database made anew) reads it from its
	// start: the mark returned is then below the one given. A locked or
	// busy database gives an error once ctx is done, never a wait past it.
	UsageSince(ctx context.Context, source string, mark int64, dst []UsageEntry) ([]UsageEntry, int64, error)
}

// UsageStreamer is a UsageStore that hands its calls over one at a time,
// so that reading a large database holds one call, not all of them.
type UsageStreamer interface {
	UsageStore
	// EachUsageSince calls each with every model call UsageSince would
	// append, in the same order (the entry is valid during the call
	// only), and returns the mark UsageSince would. On an error the calls
	// made so far are to be dropped: the mark returned is the one given.
	EachUsageSince(ctx context.Context, source string, mark int64, each func(*UsageEntry)) (int64, error)
}
