package ledger

import "os"

// datasync makes f's data durable. On macOS fsync only hands the data to
// the drive, which may keep it in its cache across a power loss; Go's
// File.Sync there is fcntl F_FULLFSYNC, which asks the drive to flush
// too (and falls back to fsync where a file system refuses it).
func datasync(f *os.File) error {
	return f.Sync()
}
