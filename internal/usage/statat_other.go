//go:build !(linux && (amd64 || arm64))

package usage

import "golang.org/x/sys/unix"

// statAt stats name in the folder dirFD.
func statAt(dirFD int, name string, st *unix.Stat_t, buf []byte) ([]byte, error) {
	return buf, unix.Fstatat(dirFD, name, st, 0)
}
