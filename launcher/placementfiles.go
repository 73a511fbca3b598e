package launcher

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// placementFiles keeps the payload text a harness reads from a file at
// launch (a harness's file form of launch placement, see
// adapters.ExternalizePlacement), 0600, until the wrapper exits — so
// payload bodies stay out of the process table: in the session folder, or
// in a folder of the harness's own where it reads such a file by name.
type placementFiles struct {
	dir   string
	paths []string
}

// target is where the adapter stores placed text for a harness started
// with env.
func (f *placementFiles) target(env []string) adapters.PlacementFiles {
	return adapters.PlacementFiles{Env: env, Write: f.write, WriteIn: f.writeIn}
}

// write stores text in a new file and returns its path.
func (f *placementFiles) write(text string) (string, error) {
	path := filepath.Join(f.dir, fmt.Sprintf("launch-placement-%d.txt", len(f.paths)+1))
	if err := statedir.WriteFileAtomic(path, []byte(text)); err != nil {
		return "", fmt.Errorf("launch placement file: %w", err)
	}
	f.paths = append(f.paths, path)
	return path, nil
}

// writeIn stores text in a new file in dir (created exclusively, 0600)
// named adapters.PlacementFilePrefix, a random part and suffix (dir is
// created 0700 when missing), and returns its path.
func (f *placementFiles) writeIn(dir, suffix, text string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("launch placement file: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("launch placement file: %w", err)
	}
	path := filepath.Join(dir, adapters.PlacementFilePrefix+hex.EncodeToString(b[:])+suffix)
	// Listed before it exists, so a wrapper killed at any point leaves a
	// trace of it for RemovePlacementFiles.
	if err := f.list(path); err != nil {
		return "", err
	}
	file, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("launch placement file: %w", err)
	}
	f.paths = append(f.paths, path)
	_, err = file.WriteString(text)
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("launch placement file: %w", err)
	}
	return path, nil
}

// outsideList names, in the session folder, the file listing the
// placement files written outside it (one path a line).
const outsideList = "placement-files-outside"

// list adds path to the session folder's list of files outside it.
func (f *placementFiles) list(path string) error {
	l, err := os.OpenFile(filepath.Join(f.dir, outsideList), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("launch placement file: %w", err)
	}
	_, err = l.WriteString(path + "\n")
	if cerr := l.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("launch placement file: %w", err)
	}
	return nil
}

// remove deletes the files written.
func (f *placementFiles) remove() {
	for _, p := range f.paths {
		_ = os.Remove(p)
	}
	f.paths = nil
	_ = os.Remove(filepath.Join(f.dir, outsideList))
}

// RemovePlacementFiles deletes the launch placement files (payload
// bodies) a wrapper wrote for the session whose folder is dir and did not
// remove — because it was killed: those in the folder, and those it listed
// in folders of the harness's own. Only files whose name is a placement
// file's are removed. For whoever finds the wrapper gone and seals the
// session.
func RemovePlacementFiles(dir string) error {
	return removePlacementFiles(dir)
}

// RemoveLeftovers removes what a killed wrapper left for the session
// whose folder is dir: its placement files (RemovePlacementFiles) and
// its control socket when that lived in the temporary folder
// (control.SocketIn: the session folder's path was too long). For whoever
// finds the wrapper gone and seals the session.
func RemoveLeftovers(dir string) error {
	err := removePlacementFiles(dir)
	if sock := control.SocketIn(dir); filepath.Dir(sock) != filepath.Clean(dir) {
		if fi, serr := os.Lstat(sock); serr == nil && fi.Mode()&fs.ModeSocket != 0 {
			if rerr := os.Remove(sock); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
				err = rerr
			}
		}
	}
	return err
}

func removePlacementFiles(dir string) error {
	inside, _ := filepath.Glob(filepath.Join(dir, "launch-placement-*.txt"))
	var outside []string
	if raw, err := os.ReadFile(filepath.Join(dir, outsideList)); err == nil {
		for _, p := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(filepath.Base(p), adapters.PlacementFilePrefix) && filepath.IsAbs(p) {
				outside = append(outside, p)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var first error
	for _, p := range append(inside, outside...) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
			first = err
		}
	}
	if err := os.Remove(filepath.Join(dir, outsideList)); err != nil && !errors.Is(err, fs.ErrNotExist) && first == nil {
		first = err
	}
	return first
}
