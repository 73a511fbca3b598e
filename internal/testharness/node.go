package testharness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A harness published as a Node package names the Node it needs in its
// package.json's engines.node. The PATH's node may be older; the
// project's newer Node is the one installed for OpenClaw (OpenClawNodeDir).

// engineNode returns engines.node of the package that holds the
// executable bin (its symlinks resolved): the nearest package.json above
// it that names a package. It is "" when that package names none or no
// package holds bin.
func engineNode(bin string) (string, error) {
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return "", err
	}
	for dir := filepath.Dir(real); ; dir = filepath.Dir(dir) {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var m struct {
				Name    string `json:"name"`
				Engines struct {
					Node string `json:"node"`
				} `json:"engines"`
			}
			if json.Unmarshal(b, &m) == nil && m.Name != "" {
				return m.Engines.Node, nil
			}
		}
		if filepath.Dir(dir) == dir {
			return "", nil
		}
	}
}

var minRange = regexp.MustCompile(`^\s*>=\s*v?(\d+)(?:\.(\d+))?(?:\.(\d+))?\s*$`)

// nodeSatisfies reports whether Node version v ("v22.19.0") meets an
// engines range of the form ">=A.B.C"; any other form counts as met (the
// harness then says itself what it lacks).
func nodeSatisfies(v, rng string) bool {
	m := minRange.FindStringSubmatch(rng)
	if m == nil {
		return true
	}
	have := strings.Split(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".")
	for i := range 3 {
		want, _ := strconv.Atoi(m[i+1])
		var got int
		if i < len(have) {
			got, _ = strconv.Atoi(have[i])
		}
		if got != want {
			return got > want
		}
	}
	return true
}

// nodeVersion runs node --version.
func nodeVersion(node string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", node, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// pathNodeVersion is the version of the PATH's node ("" when there is
// none).
var pathNodeVersion = sync.OnceValue(func() string {
	p, err := exec.LookPath("node")
	if err != nil {
		return ""
	}
	v, _ := nodeVersion(p)
	return v
})

// NodeDirFor returns the folder of a Node to put first on the PATH for
// the Node package executable bin: "" when the PATH's node meets the
// package's engines.node, else the project's newer Node (OpenClaw's,
// beside LIFELOOP_HARNESS_DIR's set or in the pinned one) when it does,
// else an error saying what is needed.
func NodeDirFor(bin string) (string, error) {
	rng, err := engineNode(bin)
	if err != nil {
		return "", err
	}
	have := pathNodeVersion()
	if have != "" && nodeSatisfies(have, rng) {
		return "", nil
	}
	var dirs []string
	if oc, err := lookupOpenClaw(); err == nil {
		dirs = append(dirs, OpenClawNodeDir(oc))
	}
	if root, err := FindModuleRoot(); err == nil {
		dirs = append(dirs, OpenClawNodeDir(filepath.Join(root, "harnesses", "openclaw", "node_modules", ".bin", "openclaw")))
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if v, err := nodeVersion(filepath.Join(d, "node")); err == nil && nodeSatisfies(v, rng) {
			return d, nil
		}
	}
	if have == "" {
		have = "no node"
	}
	return "", errors.New(bin + " needs node " + rng + ", the PATH has " + have + " and the project's Node for OpenClaw (make harnesses) is not installed")
}

// UseNodeFor puts the Node that the Node package executable bin needs
// first on this environment's PATH when the PATH's node is too old for
// it (NodeDirFor); the test fails when no Node here meets its engines.
// Such an executable starts with `#!/usr/bin/env node`, so the PATH
// picks its Node.
func (e *HarnessEnv) UseNodeFor(t testing.TB, bin string) {
	t.Helper()
	d, err := NodeDirFor(bin)
	if err != nil {
		t.Fatal(err)
	}
	if d != "" {
		e.Setenv("PATH", d+string(os.PathListSeparator)+e.path())
	}
}

// path is this environment's PATH: its own when set, the test process's
// otherwise.
func (e *HarnessEnv) path() string {
	if p, ok := e.extra["PATH"]; ok {
		return p
	}
	return os.Getenv("PATH")
}
