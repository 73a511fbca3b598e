package ptyio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// resolve finds spec.Path with exec.LookPath semantics, except that PATH
// comes from spec.Env (the child's environment) rather than from this
// process: a name containing a slash is checked as is (relative to
// spec.Dir when set); otherwise each PATH entry is tried in order and the
// first executable regular file wins. A name found only relative to the
// current directory (an empty or "." PATH entry) is refused, as
// exec.LookPath does since Go 1.19.
func resolve(spec ChildSpec) (string, error) {
	name := spec.Path
	if name == "" {
		return "", fmt.Errorf("%w: empty command", ErrNotFound)
	}
	if strings.Contains(name, "/") {
		p := name
		if spec.Dir != "" && !filepath.IsAbs(p) {
			p = filepath.Join(spec.Dir, p)
		}
		if err := checkExecutable(p); err != nil {
			return "", classifyLookError(name, err)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(envValue(spec.Env, "PATH")) {
		if dir == "" || !filepath.IsAbs(dir) {
			// Relative entries would resolve against the current
			// directory; refuse them like exec.LookPath (ErrDot).
			continue
		}
		p := filepath.Join(dir, name)
		if checkExecutable(p) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: %q is not in the PATH given to the command; check the name or PATH", ErrNotFound, name)
}

// errIsDir marks a directory where a program was expected.
var errIsDir = errors.New("is a directory")

// checkExecutable reports whether p is a regular file with an execute bit.
func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errIsDir
	}
	if fi.Mode()&0o111 == 0 {
		return fs.ErrPermission
	}
	return nil
}

func classifyLookError(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %s: no such file", ErrNotFound, name)
	}
	if errors.Is(err, errIsDir) {
		return fmt.Errorf("%w: %s: is a directory", ErrNotExecutable, name)
	}
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("%w: %s: permission denied (chmod +x?)", ErrNotExecutable, name)
	}
	return fmt.Errorf("%w: %s: %w", ErrNotExecutable, name, err)
}

// envValue returns the last value of key in env ("KEY=value" entries).
func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}
