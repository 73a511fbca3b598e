//go:build linux || darwin

package procfs

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// exitPoll bounds each wait for an exit, so that stop is seen.
const exitPoll = 50 * time.Millisecond

// watchExits is WatchExits' loop, whatever watches the processes: in a
// goroutine it calls wait, which blocks at most exitPoll and returns how
// many of the n watched processes ended meanwhile, until all have ended,
// stop is closed or wait fails (EINTR aside); then it calls release and
// closes the channel it returned.
func watchExits(n int, stop <-chan struct{}, wait func() (int, error), release func()) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer release()
		for n > 0 {
			select {
			case <-stop:
				return
			default:
			}
			ended, err := wait()
			if err != nil && !errors.Is(err, unix.EINTR) {
				return
			}
			n -= ended
		}
	}()
	return done
}
