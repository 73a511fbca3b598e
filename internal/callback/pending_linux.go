package callback

import (
	"os"

	"golang.org/x/sys/unix"
)

// pendingBytes returns how many bytes sit unread in the pipe f belongs to.
func pendingBytes(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
}
