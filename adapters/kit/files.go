package kit

import (
	"io/fs"
	"os"
	"path/filepath"
)

// FindFiles returns the files under root whose path match accepts, in
// walk order. A root that does not exist yields none; a folder that
// cannot be read is left out, not fatal.
func FindFiles(root string, match func(path string) bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root && os.IsNotExist(err) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() && match(p) {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}
