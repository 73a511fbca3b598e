package usage

import (
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// fileStat is what a run compares with a file's record.
type fileStat struct {
	size, modTime int64 // modTime in ns
	err           error
}

// statAll stats every file (paths in path order), a few at a time, each
// relative to its folder opened once: a run with nothing new spends most
// of its time there, and a name looked up in an open folder costs the
// kernel one step, not one per folder of the path.
func statAll(paths []string) []fileStat {
	out := make([]fileStat, len(paths))
	dirFD := make([]int, len(paths))
	fds := map[string]int{}
	for i, p := range paths {
		d := filepath.Dir(p)
		fd, ok := fds[d]
		if !ok {
			var err error
			if fd, err = unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
				fd = -1 // stat by path: it reports the error
			}
			fds[d] = fd
		}
		dirFD[i] = fd
	}
	defer func() {
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	const workers = 4
	chunk := (len(paths) + workers - 1) / workers
	var wg sync.WaitGroup
	for lo := 0; lo < len(paths); lo += chunk {
		hi := min(lo+chunk, len(paths))
		wg.Add(1)
		go func() {
			defer wg.Done()
			var st unix.Stat_t
			for i := lo; i < hi; i++ {
				if dirFD[i] < 0 {
					fi, err := os.Stat(paths[i])
					if err != nil {
						out[i].err = err
						continue
					}
					out[i] = fileStat{size: fi.Size(), modTime: fi.ModTime().UnixNano()}
					continue
				}
				if err := unix.Fstatat(dirFD[i], filepath.Base(paths[i]), &st, 0); err != nil {
					out[i].err = &os.PathError{Op: "stat", Path: paths[i], Err: err}
					continue
				}
				out[i] = fileStat{size: st.Size, modTime: st.Mtim.Nano()}
			}
		}()
	}
	wg.Wait()
	return out
}
