package telemetry

import (
	"time"

	"golang.org/x/sys/unix"
)

// birthTime returns path's birth time, stat's st_birthtimespec (APFS
// and HFS+ keep it), or its modification time where it is unset.
func birthTime(path string) (time.Time, bool) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return time.Time{}, false
	}
	if st.Btim.Sec > 0 {
		return time.Unix(st.Btim.Unix()), true
	}
	return time.Unix(st.Mtim.Unix()), true
}
