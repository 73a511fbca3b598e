package opencode

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of opencode-ai above
// the executable names the version; `opencode --version` prints it otherwise.
// Pinned 1.18.33; the newest version the end-to-end tests passed against is
// 1.18.33 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "opencode-ai", Args: []string{"--version"}, Pinned: "1.18.33", NewestProven: "1.18.33"}
}
