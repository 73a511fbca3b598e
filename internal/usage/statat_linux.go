//go:build linux && (amd64 || arm64)

package usage

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// statAt stats name in the folder dirFD, its name ended by a 0 byte in
// buf (returned for the next call): unix.Fstatat would allocate a copy
// of the name for every file.
func statAt(dirFD int, name string, st *unix.Stat_t, buf []byte) ([]byte, error) {
	if strings.IndexByte(name, 0) >= 0 {
		return buf, unix.EINVAL
	}
	buf = append(append(buf[:0], name...), 0)
	_, _, errno := unix.Syscall6(unix.SYS_NEWFSTATAT, uintptr(dirFD), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(st)), 0, 0, 0)
	if errno != 0 {
		return buf, errno
	}
	return buf, nil
}
