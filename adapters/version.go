package adapters

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// VersionSource says how to tell which version of a harness a launch
// runs, and which versions lifeloop's tests proved.
type VersionSource struct {
	// Package is the npm package that installs the harness: the
	// package.json above the executable names the version without running
	// anything.
	Package string
	// Successor is the npm package the harness is published as since it
	// moved to a new name ("" when it has not): Package is then the old
	// name, frozen at its last release. The package.json of either names
	// the version; `make harnesses-latest` installs the successor.
	Successor string
	// Args make the harness print its version (e.g. --version); the first
	// dotted version number in what it prints is taken. Used only when no
	// package.json tells.
	Args []string
	// Pinned is the version the project's tests run (harnesses/package.json);
	// NewestProven the newest version the same end-to-end tests passed
	// against (docs/harnesses.md).
	Pinned, NewestProven string
	// Changes name newer releases known to have changed something
	// lifeloop reads, none of them proven, oldest first: a version at or
	// past one's Since is reported as unproven with what changed.
	Changes []VersionChange
}

// VersionChange is a release line known to have changed what lifeloop
// reads from a harness.
type VersionChange struct {
	// Since is the first release with the change ("2.0.0").
	Since string
	// What says what changed and what that does to lifeloop's reading.
	What string
}

// Versioned is implemented by a harness whose version lifeloop can read:
// it goes into the session.started receipt (telemetry_summary.harness_version),
// and a version newer than NewestProven is reported as drift.
type Versioned interface {
	Version() VersionSource
}

// VersionSource returns the harness's version source, and false when it
// has none.
func (a *Adapter) VersionSource() (VersionSource, bool) {
	v, ok := a.h.(Versioned)
	if !ok {
		return VersionSource{}, false
	}
	return v.Version(), true
}

// DefaultVersionTimeout bounds ReadVersion's run of the harness.
const DefaultVersionTimeout = 5 * time.Second

// ReadVersion returns the version of the harness argv starts, "" when it
// cannot be told: the package.json of src.Package above the harness's
// executable or script (found on path, the launch's PATH, when argv names
// it without a folder), else the output of the launcher part of argv
// followed by src.Args, run with env and bounded by ctx.
func ReadVersion(ctx context.Context, argv []string, env []string, path string, src VersionSource) string {
	if v := PackageVersion(argv, path, src); v != "" {
		return v
	}
	if len(src.Args) == 0 {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultVersionTimeout)
	defer cancel()
	out, err := HarnessOutput(ctx, argv, env, path, src.Args)
	if err != nil {
		return ""
	}
	return versionRe().FindString(out)
}

// HarnessOutput runs the launcher part of argv (the harness's executable,
// with the env assignments, env(1), node or package runner before it)
// followed by args instead of the harness's own arguments, with env, and
// returns what it printed (standard output and error).
func HarnessOutput(ctx context.Context, argv, env []string, path string, args []string) (string, error) {
	l := parseLaunch(argv)
	if l.argStart == 0 || l.argStart > len(argv) {
		return "", errors.New("no harness on the command line")
	}
	cmdline := append(append([]string{}, argv[:l.argStart]...), args...)
	env = slices.Clone(env)
	for len(cmdline) > 0 && isEnvAssignment(cmdline[0]) {
		env = append(env, cmdline[0])
		cmdline = cmdline[1:]
	}
	if len(cmdline) == 0 {
		return "", errors.New("no harness on the command line")
	}
	prog := resolveProgram(cmdline[0], path)
	if prog == "" {
		return "", fmt.Errorf("%s: not found on the launch's PATH", cmdline[0])
	}
	cmd := exec.CommandContext(ctx, prog, cmdline[1:]...)
	cmd.Env = append([]string{}, env...) // never lifeloop's own environment
	out, err := cmd.CombinedOutput()     // some harnesses print their version on stderr
	return string(out), err
}

// PackageVersion is the version in the package.json of src.Package above
// the executable or script of the harness argv starts (found on path when
// argv names it without a folder), or "". It runs nothing.
func PackageVersion(argv []string, path string, src VersionSource) string {
	l := parseLaunch(argv)
	if src.Package == "" || l.argStart == 0 || l.argStart > len(argv) {
		return ""
	}
	prog := resolveProgram(argv[l.argStart-1], path)
	if prog == "" {
		return ""
	}
	if v := packageVersion(prog, src.Package); v != "" || src.Successor == "" {
		return v
	}
	return packageVersion(prog, src.Successor)
}

// versionRe is compiled on first use, not at every lifeloop start.
var versionRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\d+\.\d+(?:\.\d+)?(?:-[0-9A-Za-z.]+)?`)
})

// resolveProgram finds prog on path (the launch's PATH, never lifeloop's
// own) when it names no folder; "" when it is not there. Like the launch
// itself (exec.LookPath since Go 1.19), it never takes a program found
// only through an empty or relative PATH entry, which would run whatever
// the current folder holds under that name.
func resolveProgram(prog, path string) string {
	if strings.ContainsRune(prog, '/') {
		return prog
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// packageVersion walks up from the real location of prog to the
// package.json of the package named pkg and returns its version.
func packageVersion(prog, pkg string) string {
	real, err := filepath.EvalSymlinks(prog)
	if err != nil {
		return ""
	}
	dir := filepath.Dir(real)
	for i := 0; i < 8; i++ {
		b, err := os.ReadFile(filepath.Join(dir, "package.json"))
		if err == nil {
			var p struct{ Name, Version string }
			if json.Unmarshal(b, &p) == nil && p.Name == pkg {
				return p.Version
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return ""
}

// CompareVersions compares two dotted version numbers numerically, part
// by part (a missing part is 0; a pre-release suffix is ignored): -1, 0
// or 1.
func CompareVersions(a, b string) int {
	pa, pb := versionParts(a), versionParts(b)
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y int
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}

func versionParts(v string) []int {
	v, _, _ = strings.Cut(v, "-")
	var out []int
	for _, p := range strings.Split(v, ".") {
		n, _ := strconv.Atoi(p)
		out = append(out, n)
	}
	return out
}

// UnprovenVersion returns the drift evidence for a harness at version v
// newer than the newest version src's tests proved, or "" when v is known
// and proven (or nothing was proven). A known change v carries
// (src.Changes) is named in it.
func UnprovenVersion(name, v string, src VersionSource) string {
	if v == "" || src.NewestProven == "" || CompareVersions(v, src.NewestProven) <= 0 {
		return ""
	}
	for _, c := range slices.Backward(src.Changes) {
		if CompareVersions(v, c.Since) >= 0 {
			return name + " " + v + " is newer than the newest version lifeloop's tests proved (" + src.NewestProven + "): " + c.What
		}
	}
	return name + " " + v + " is newer than the newest version lifeloop's tests proved (" + src.NewestProven + "); what lifeloop reads from it may be incomplete"
}
