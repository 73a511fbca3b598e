package telemetry

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// ClaimSet is an in-process [Claims]: one set shared by the watchers of
// one lifeloop process. Owner distinguishes sessions.
type ClaimSet struct {
	mu sync.Mutex
	m  map[string]string // path -> owner
}

// For returns the [Claims] view of the set for one owner (session).
func (s *ClaimSet) For(owner string) Claims { return claimView{s, owner} }

type claimView struct {
	s     *ClaimSet
	owner string
}

func (v claimView) Claim(path string) bool {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	if v.s.m == nil {
		v.s.m = make(map[string]string)
	}
	if o, ok := v.s.m[path]; ok && o != v.owner {
		return false
	}
	v.s.m[path] = v.owner
	return true
}

func (v claimView) Release(path string) {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	if v.s.m[path] == v.owner {
		delete(v.s.m, path)
	}
}

// FileClaims is a cross-process [Claims]: a claim is a file
// <Dir>/<sha256(path)>.claim created with O_EXCL and holding "<pid>
// <owner>". A claim whose process no longer exists is stale and is taken
// over. Dir is created 0700 when missing; claim files are 0600.
type FileClaims struct {
	Dir   string
	Owner string
	// PID is this process's id (os.Getpid() when 0).
	PID int
}

func (c *FileClaims) file(path string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(path)))
	return filepath.Join(c.Dir, hex.EncodeToString(sum[:16])+".claim")
}

func (c *FileClaims) pid() int {
	if c.PID != 0 {
		return c.PID
	}
	return os.Getpid()
}

// Claim implements [Claims].
func (c *FileClaims) Claim(path string) bool {
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return false
	}
	name := c.file(path)
	body := fmt.Sprintf("%d %s\n", c.pid(), c.Owner)
	for range 2 {
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.WriteString(body)
			cerr := f.Close()
			return werr == nil && cerr == nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return false
		}
		b, err := os.ReadFile(name)
		if err != nil {
			return false
		}
		pidStr, owner, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
		if owner == c.Owner {
			return true
		}
		pid, err := strconv.Atoi(pidStr)
		if err == nil && pid > 0 && processAlive(pid) {
			return false
		}
		// Stale claim (or a torn write): remove it and try once more.
		_ = os.Remove(name)
	}
	return false
}

// Release implements [Claims]; it removes the claim only if this owner
// holds it.
func (c *FileClaims) Release(path string) {
	name := c.file(path)
	b, err := os.ReadFile(name)
	if err != nil {
		return
	}
	_, owner, _ := strings.Cut(strings.TrimSpace(string(b)), " ")
	if owner == c.Owner {
		_ = os.Remove(name)
	}
}

func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
