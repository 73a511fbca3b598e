package launcher

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// placementFiles keeps the payload text a harness reads from a file at
// launch (a harness's file form of launch placement, see
// adapters.ExternalizePlacement) in the session folder, 0600, until the
// wrapper exits — so payload bodies stay out of the process table.
type placementFiles struct {
	dir   string
	paths []string
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

// remove deletes the files written.
func (f *placementFiles) remove() {
	for _, p := range f.paths {
		_ = os.Remove(p)
	}
	f.paths = nil
}
