// Package telemetry observes the files a harness writes while it runs and
// turns them into typed observations with provenance.
//
// The pieces, from the bottom up:
//
//   - [Tail] follows one JSONL file by offset, inode and size. fsnotify (on
//     the parent folder) only says "read again"; a slow safety poll covers
//     missed events, and when no watcher can be created Tail polls and says
//     so with a [TailMode] event. Partial last lines wait for their newline,
//     over-long lines are skipped and reported, invalid JSON lines are
//     reported as evidence, truncation and replacement restart from offset 0
//     and deletion is reported.
//   - [DirWatcher] watches a folder tree recursively (new subfolders are
//     added as they appear), with a polling fallback.
//   - A [Parser] (each harness's own, in its folder under adapters/) turns
//     the lines of its session file into [Observation]s: harness session
//     ids, frame boundaries, token usage, compaction and API errors.
//   - [PressureTracker] turns usage into pressure levels and reports a
//     change only when the level changes or a compaction resets it.
//   - A [Discoverer] (each harness's own) lists the files a launch may be
//     writing; [Discover] picks the one a freshly launched harness writes,
//     without configuration, keeping concurrent sessions apart with
//     [Claims].
//   - A [RecordSource] is a discoverer whose sessions are records in a
//     store (rows of a database) rather than lines of a file: it follows
//     them itself and delivers each record as a line.
//   - [Watch] combines discovery, tailing, parsing and pressure into one
//     stream of observations.
//
// The package never builds contract receipts, never reads environment
// variables and never prints: callers pass configuration in and receive
// observations through a sink function.
package telemetry
