package fleet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ListenerLock is the file, in the listener's folder, whose flock says
// which process takes this machine's commands: one listener per state
// folder, whether `lifeloop serve` or a wrapped session holds it. The
// kernel lets go of it when its process ends, however it ends.
const ListenerLock = "listener.lock"

// TryListenerLock takes dir's listener lock without waiting; held is
// false when another process (or another open of this one) has it.
// Closing the file lets it go.
func TryListenerLock(dir string) (f *os.File, held bool, err error) {
	if err := os.MkdirAll(dir, statedir.DirPerm); err != nil {
		return nil, false, fmt.Errorf("fleet listener folder: %w", err)
	}
	path := filepath.Join(dir, ListenerLock)
	f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, statedir.FilePerm)
	if err != nil {
		return nil, false, fmt.Errorf("fleet listener lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err == nil {
		return f, true, nil
	}
	_ = f.Close()
	if errors.Is(err, unix.EWOULDBLOCK) {
		return nil, false, nil
	}
	return nil, false, fmt.Errorf("fleet listener lock %s: %w", path, err)
}

// ListenWhenFree is Listen for one of several processes that may each
// take the machine's commands (every wrapped session publishing to a
// broker, and `lifeloop serve`): it listens while it holds cfg.Dir's
// listener lock, and while another process holds it, tries again every
// poll (default 2 s). So the machine has a listener as long as one of
// them runs, and the next one takes over within poll of the holder's
// end; commands wait in the durable queue meanwhile. It returns when
// ctx ends, the lock let go.
func ListenWhenFree(ctx context.Context, cfg ListenerConfig, poll time.Duration) error {
	if poll <= 0 {
		poll = 2 * time.Second
	}
	waiting := false
	for ctx.Err() == nil {
		f, held, err := TryListenerLock(cfg.Dir)
		if err != nil {
			return err
		}
		if held {
			var beats <-chan struct{}
			hctx, stopBeats := context.WithCancel(ctx)
			if cfg.Heartbeats.Exchange != "" {
				beats = StartHeartbeats(hctx, HeartbeatConfig{Target: cfg.Heartbeats, Machine: cfg.Machine, Now: cfg.Now, Logger: cfg.Logger})
			}
			err := Listen(ctx, cfg)
			stopBeats()
			if beats != nil {
				<-beats
			}
			_ = f.Close()
			return err
		}
		if !waiting && cfg.Logger != nil {
			cfg.Logger.Info("fleet listener: another process takes this machine's commands; waiting for its lock", "lock", filepath.Join(cfg.Dir, ListenerLock))
			waiting = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(poll):
		}
	}
	return nil
}
