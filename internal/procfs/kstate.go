package procfs

// The p_stat values of a macOS kinfo_proc (<sys/proc.h>).
const (
	darwinSIDL   = 1 // being created by fork
	darwinSRUN   = 2 // runnable
	darwinSSLEEP = 3 // sleeping on an address
	darwinSSTOP  = 4 // stopped
	darwinSZOMB  = 5 // exited, awaiting collection by its parent
)

// darwinState maps a macOS p_stat to the state letter /proc uses ('Z'
// for a zombie, which is what callers test), '?' for an unknown value.
func darwinState(stat int8) byte {
	switch stat {
	case darwinSIDL, darwinSRUN:
		return 'R'
	case darwinSSLEEP:
		return 'S'
	case darwinSSTOP:
		return 'T'
	case darwinSZOMB:
		return 'Z'
	}
	return '?'
}

// startMicros is a macOS process start time (p_starttime) in
// microseconds since the epoch, the StartTicks that identifies it across
// pid reuse; 0 (unknown) for a time before the epoch.
func startMicros(sec, usec int64) uint64 {
	if sec < 0 || usec < 0 {
		return 0
	}
	return uint64(sec)*1_000_000 + uint64(usec)
}
