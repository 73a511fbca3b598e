package copilot

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of
// @github/copilot above the executable (the npm loader) names the
// version; `copilot --version` prints it otherwise.
// Pinned 1.0.102; the newest version the end-to-end tests passed against is
// 1.0.102 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "@github/copilot", Args: []string{"--version"}, Pinned: "1.0.102", NewestProven: "1.0.102"}
}
