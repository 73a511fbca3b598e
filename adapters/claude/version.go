package claude

import (
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

// Versions (adapters.Versioned): the npm package's package.json above the
// claude executable names the version; `claude --version` prints
// "2.1.330 (Claude Code)" otherwise. Every transcript line records the
// version too ("version"), which the parser reports.
const (
	pinnedVersion = "2.1.332"
	newestProven  = "2.1.332"
	// oldestProven is the oldest release the end-to-end tests passed
	// against (the pin until 2026-12-02): it has no
	// --system-prompt-snapshot and posts hooks over HTTP.
	oldestProven = "2.1.197"
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

// NeedsHelp implements adapters.FactsTaker: a resumed conversation's
// command line depends on whether the Claude it runs has
// --system-prompt-snapshot; 2.1.330 and later have it, 2.1.197 and
// earlier do not, and for a release in between, or an unknown version,
// its --help says.
func (Harness) NeedsHelp(version string) bool {
	return version == "" || adapters.CompareVersions(version, snapshotSince) < 0 && adapters.CompareVersions(version, oldestProven) > 0
}

// WithFacts implements adapters.FactsTaker.
func (h Harness) WithFacts(f adapters.Facts) adapters.Harness {
	h.facts = f
	return h
}

// snapshotSupported reports whether the Claude the facts describe has
// --system-prompt-snapshot (see NeedsHelp). It runs nothing: without
// facts (a harness whose version and --help could not be read) it is
// false, and a resumed conversation gets no snapshot option.
func (h Harness) snapshotSupported() bool {
	v := h.facts.Version
	switch {
	case v != "" && adapters.CompareVersions(v, snapshotSince) >= 0:
		return true
	case v != "" && adapters.CompareVersions(v, oldestProven) <= 0:
		return false
	}
	return strings.Contains(h.facts.Help, snapshotFlag)
}
