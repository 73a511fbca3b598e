package callback

import (
	"os"

	"golang.org/x/sys/unix"
)

// fionread is macOS's FIONREAD, _IOR('f', 127, int) in <sys/filio.h>;
// golang.org/x/sys/unix does not define it for darwin.
const fionread = 0x4004667f

// pendingBytes returns how many bytes sit unread in the pipe f belongs to.
func pendingBytes(f *os.File) (int, error) {
	return unix.IoctlGetInt(int(f.Fd()), fionread)
}
