//go:build !linux

package procfs

// WatchExits is nil where processes are not watched for their exit (only
// Linux's pidfds are used): the caller looks again after a pause.
func WatchExits(pids []int, stop <-chan struct{}) <-chan struct{} { return nil }
