package statedir

import (
	"os"
	"path/filepath"
	"time"
)

// SweepFile stamps, by its modification time, a state folder's last sweep
// for sessions whose wrapper died.
const SweepFile = "swept"

// SweepDue reports whether root was last swept more than every before now
// (or never, or its stamp is from the future), and if so stamps it swept
// at now. A sweep reads every session's record: the runs of a folder that
// a fleet fills with thousands of one-shots take turns instead, one sweep
// per interval among them. When the stamp cannot be written the sweep is
// due every time.
func SweepDue(root string, every time.Duration, now time.Time) bool {
	p := filepath.Join(root, SweepFile)
	if fi, err := os.Stat(p); err == nil {
		if age := now.Sub(fi.ModTime()); age >= 0 && age < every {
			return false
		}
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE, FilePerm)
	if err != nil {
		return true
	}
	_ = f.Close()
	_ = os.Chtimes(p, now, now)
	return true
}
