package claude

import (
	"context"
	"os"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

// Versions (adapters.Versioned): the npm package's package.json above the
// claude executable names the version; `claude --version` prints
// "2.1.330 (Claude Code)" otherwise. Every transcript line records the
// version too ("version"), which the parser reports.
const (
	pinnedVersion = "2.1.197"
	newestProven  = "2.1.332"
	// snapshotSince is the first release known to have
	// --system-prompt-snapshot.
	snapshotSince = "2.1.330"
)

// Version implements adapters.Versioned.
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{
		Package: "@anthropic-ai/claude-code", Args: []string{"--version"},
		Pinned: pinnedVersion, NewestProven: newestProven,
	}
}

// snapshotSupported reports whether the Claude that argv starts has
// --system-prompt-snapshot: 2.1.330 and later have it, 2.1.197 and
// earlier do not; for a release in between, or an unknown version, its
// --help says.
func snapshotSupported(argv []string) bool {
	v := adapters.ReadVersion(context.Background(), argv, os.Environ(), os.Getenv("PATH"), Harness{}.Version())
	switch {
	case v != "" && adapters.CompareVersions(v, snapshotSince) >= 0:
		return true
	case v != "" && adapters.CompareVersions(v, pinnedVersion) <= 0:
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), adapters.DefaultVersionTimeout)
	defer cancel()
	out, err := adapters.HarnessOutput(ctx, argv, os.Environ(), os.Getenv("PATH"), []string{"--help"})
	return err == nil && strings.Contains(out, snapshotFlag)
}
