// Package statedir resolves lifeloop's state directory and owns its file
// discipline: folders 0700, files 0600, atomic writes (temp file, fsync,
// rename, fsync of the folder), and the per-session layout
//
//	<root>/sessions/<ses_id>/session.json     the SessionRecord
//	<root>/sessions/<ses_id>/receipts.jsonl   the receipt ledger
//	<root>/sessions/<ses_id>/control.sock     the running wrapper's control socket
//	<root>/sessions/<ses_id>/continuation/    private continuation payloads
//	<root>/sessions/<ses_id>/lifeloop.log     the session log
//	<root>/swept                              stamp of the last sweep for lost sessions
//
// The package never reads the environment itself: callers pass a getenv
// function.
package statedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/lifeloop/lifeloop/atomicfile"
)

// Permissions for everything lifeloop writes under the state directory
// (atomicfile's, which the plug-ins' kit shares).
const (
	DirPerm  = atomicfile.DirPerm
	FilePerm = atomicfile.FilePerm
)

// EnvStateDir is the environment variable that overrides the default
// state directory (below the --state-dir flag).
const EnvStateDir = "LIFELOOP_STATE_DIR"

// Resolve returns the absolute state directory: flag when non-empty, else
// $LIFELOOP_STATE_DIR, else $XDG_STATE_HOME/lifeloop (when XDG_STATE_HOME
// is absolute, as the XDG spec requires), else $HOME/.local/state/lifeloop.
// It does not create the directory; see Ensure.
func Resolve(flag string, getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	pick := func(p string) (string, error) {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("state directory %q: %w", p, err)
		}
		return abs, nil
	}
	if flag != "" {
		return pick(flag)
	}
	if v := getenv(EnvStateDir); v != "" {
		return pick(v)
	}
	if v := getenv("XDG_STATE_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "lifeloop"), nil
	}
	if v := getenv("HOME"); v != "" {
		return pick(filepath.Join(v, ".local", "state", "lifeloop"))
	}
	return "", errors.New("cannot locate the state directory: HOME is not set; pass --state-dir or set " + EnvStateDir)
}

// Ensure creates dir (and missing parents) with DirPerm and checks that
// dir is a folder owned by the current user. A folder with looser
// permissions is tightened to DirPerm; a folder owned by someone else is
// refused, because its owner could read or forge receipts.
func Ensure(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		if err := os.MkdirAll(dir, DirPerm); err != nil {
			return fmt.Errorf("create state folder %s: %w", dir, err)
		}
		if fi, err = os.Stat(dir); err != nil {
			return fmt.Errorf("state folder %s: %w", dir, err)
		}
	}
	return checkDirInfo(dir, fi)
}

func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("state folder %s: %w", dir, err)
	}
	return checkDirInfo(dir, fi)
}

// checkDirInfo checks that dir (whose stat is fi) is a folder of ours, at
// most 0700 (tightening it when wider).
func checkDirInfo(dir string, fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("state folder %s is not a folder; remove it or pass another --state-dir", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state folder %s is owned by uid %d, not by you (uid %d); pass a --state-dir you own",
			dir, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&^DirPerm != 0 {
		if err := os.Chmod(dir, DirPerm); err != nil {
			return fmt.Errorf("tighten permissions of %s to 0700: %w", dir, err)
		}
	}
	return nil
}

// WriteFileAtomic replaces path with data so that readers see either the
// old or the new content, never a mix, even across a crash (atomicfile.Write).
func WriteFileAtomic(path string, data []byte) error { return atomicfile.Write(path, data) }

// ReplaceFile is WriteFileAtomic without the fsyncs (atomicfile.Replace):
// for files rebuilt from a durable source (session.json from the ledger,
// see package seal).
func ReplaceFile(path string, data []byte) error { return atomicfile.Replace(path, data) }

// SyncDir fsyncs a folder so that entries created, renamed or removed in it
// survive a crash.
func SyncDir(dir string) error { return atomicfile.SyncDir(dir) }
