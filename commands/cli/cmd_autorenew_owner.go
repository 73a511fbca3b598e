package cli

import (
	"errors"
	"os"
	"syscall"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// followedElsewhere returns the pid of another living policy client
// that follows session id (its autorenew.json names it), so that one
// session never has two policies asking for renewals.
func followedElsewhere(root, id string) (pid int, ok bool) {
	st, err := autorenew.ReadState(autorenew.StatePath(statedir.SessionDir(root, id)))
	if err != nil || st.PID <= 0 || st.PID == os.Getpid() {
		return 0, false
	}
	err = syscall.Kill(st.PID, 0)
	if err == nil || errors.Is(err, syscall.EPERM) {
		return st.PID, true
	}
	return 0, false
}
