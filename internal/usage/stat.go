package usage

import (
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// fileStat is what a run compares with a file's record.
type fileStat struct {
	size, modTime int64 // modTime in ns
	err           error
}

// statAll stats every file, a few at a time, each relative to its folder
// opened once: a run with nothing new spends most of its time there, and
// a name looked up in an open folder costs the kernel one step, not one
// per folder of the path. A folder's files are usually next to each
// other (a listing gives them so), so a folder is looked up by comparing
// with the file before.
func statAll(paths []string) []fileStat {
	out := make([]fileStat, len(paths))
	dirFD := make([]int32, len(paths))
	base := make([]int32, len(paths)) // where each path's name starts
	fds := map[string]int{}
	prev, prevFD := "", -1
	for i, p := range paths {
		j := strings.LastIndexByte(p, '/')
		dir := "."
		if j == 0 {
			dir = "/"
		} else if j > 0 {
			dir = p[:j]
		}
		base[i] = int32(j + 1)
		if i == 0 || dir != prev {
			fd, ok := fds[dir]
			if !ok {
				var err error
				if fd, err = unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
					fd = -1 // stat by path: it reports the error
				}
				fds[dir] = fd
			}
			prev, prevFD = dir, fd
		}
		dirFD[i] = int32(prevFD)
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
			var name []byte
			for i := lo; i < hi; i++ {
				if dirFD[i] < 0 || base[i] == int32(len(paths[i])) {
					fi, err := os.Stat(paths[i])
					if err != nil {
						out[i].err = err
						continue
					}
					out[i] = fileStat{size: fi.Size(), modTime: fi.ModTime().UnixNano()}
					continue
				}
				var err error
				if name, err = statAt(int(dirFD[i]), paths[i][base[i]:], &st, name); err != nil {
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
