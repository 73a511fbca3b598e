package openclaw

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of openclaw
// above the executable names the version; `openclaw --version` prints it
// otherwise. Pinned 2026.9.6; the newest version the end-to-end tests
// passed against is 2026.9.6 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "openclaw", Args: []string{"--version"}, Pinned: "2026.9.6", NewestProven: "2026.9.6"}
}
