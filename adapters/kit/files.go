package kit

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
)

// FindFiles returns the files under root whose path match accepts, in
// path order (sorted as strings). A root that does not exist yields none;
// a folder that cannot be read is left out, not fatal. Folders are read
// a few at a time, each once; links are not followed.
func FindFiles(root string, match func(path string) bool) ([]string, error) {
	root = filepath.Clean(root)
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, nil
	}
	if !fi.IsDir() {
		if match(root) {
			return []string{root}, nil
		}
		return nil, nil
	}
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   = []string{root}
		pending = 1 // folders queued or being read
		files   []string
		wg      sync.WaitGroup
	)
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var found, dirs []string
			mu.Lock()
			for {
				for len(queue) == 0 && pending > 0 {
					cond.Wait()
				}
				if pending == 0 {
					break
				}
				dir := queue[len(queue)-1]
				queue = queue[:len(queue)-1]
				mu.Unlock()
				found, dirs = readFolder(dir, match, found, dirs[:0])
				mu.Lock()
				queue = append(queue, dirs...)
				pending += len(dirs) - 1
				cond.Broadcast()
			}
			files = append(files, found...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(files)
	return files, nil
}

// readFolder appends dir's files that match accepts to files and its
// folders to dirs.
func readFolder(dir string, match func(string) bool, files, dirs []string) ([]string, []string) {
	f, err := os.Open(dir)
	if err != nil {
		return files, dirs
	}
	ents, _ := f.ReadDir(-1) // in the system's order: sorted at the end
	f.Close()
	prefix := dir
	if prefix != string(filepath.Separator) {
		prefix += string(filepath.Separator)
	}
	for _, e := range ents {
		p := prefix + e.Name()
		if e.Type()&fs.ModeDir != 0 {
			dirs = append(dirs, p)
		} else if match(p) {
			files = append(files, p)
		}
	}
	return files, dirs
}
