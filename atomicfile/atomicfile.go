// Package atomicfile is lifeloop's file discipline at its lowest floor:
// the modes of what it writes (folders 0700, files 0600) and writes that
// readers see whole (temporary file, fsync, rename, fsync of the folder).
// It imports nothing of lifeloop, so both the state directory
// (internal/statedir) and the plug-ins' kit (adapters/kit) build on it
// without either importing the other.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Permissions for everything lifeloop writes for itself.
const (
	DirPerm  fs.FileMode = 0o700
	FilePerm fs.FileMode = 0o600
)

// Write replaces path with data so that readers see either the old or the
// new content, never a mix, even across a crash: it writes a temporary
// file (FilePerm) in the same folder, fsyncs it, renames it over path and
// fsyncs the folder.
func Write(path string, data []byte) error { return replaceFile(path, data, true) }

// Replace is Write without the fsyncs: readers see the old or the new
// content, never a mix, and a crash of the process changes nothing of
// that; after a power loss the file may be old, empty or missing. For
// files rebuilt from a durable source.
func Replace(path string, data []byte) error { return replaceFile(path, data, false) }

// ReplaceWith is Replace of what write writes, which goes to the
// temporary file as it comes: a large file is never held whole in
// memory. An error of write leaves path as it was.
func ReplaceWith(path string, write func(io.Writer) error) error {
	return replaceWith(path, write, false)
}

func replaceFile(path string, data []byte, durable bool) error {
	return replaceWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, durable)
}

func replaceWith(path string, write func(io.Writer) error, durable bool) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if err = f.Chmod(FilePerm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if err = f.Sync(); err != nil {
			return fmt.Errorf("write %s: fsync: %w", path, err)
		}
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a folder so that entries created, renamed or removed in it
// survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("fsync folder %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("fsync folder %s: %w", dir, err)
	}
	return nil
}
