package telemetry

import (
	"time"

	"golang.org/x/sys/unix"
)

// birthTime returns path's birth time through statx, or its modification
// time from the same call where the file system keeps no birth time.
func birthTime(path string) (time.Time, bool) {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, 0, unix.STATX_BTIME|unix.STATX_MTIME, &st); err != nil {
		return time.Time{}, false
	}
	if st.Mask&unix.STATX_BTIME != 0 && st.Btime.Sec != 0 {
		return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec)), true
	}
	return time.Unix(st.Mtime.Sec, int64(st.Mtime.Nsec)), true
}
