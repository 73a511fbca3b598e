// Package kit is what plug-ins (the harness folders under adapters/)
// share, so that none imports another or anything of lifeloop's
// internal/: the modes and atomic writes of the files they place, the
// follower of a session's rows in a harness's SQLite database, the
// parser of the session-entry JSONL format two harnesses record (and its
// usage parser), a session pinned or resumed by id on a command line
// (SessionOptions), and the JavaScript runtime of the hook bridges
// (BridgeModule).
//
// The kit names no harness (TestGenericCodeNamesNoHarness) and imports
// no plug-in and nothing under internal/ (TestPluginsImportOnlyTheKit).
package kit

import "github.com/lifeloop/lifeloop/atomicfile"

// Modes of the folders and files a plug-in writes for lifeloop (the
// state directory's: internal/statedir uses the same).
const (
	DirPerm  = atomicfile.DirPerm
	FilePerm = atomicfile.FilePerm
)

// WriteFileAtomic replaces path with data so that readers see either the
// old or the new content, never a mix, even across a crash: a temporary
// file (FilePerm) in the same folder, fsynced, renamed over path, and the
// folder fsynced.
func WriteFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }
