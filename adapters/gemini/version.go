package gemini

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of @google/gemini-cli above
// the executable names the version; `gemini --version` prints it otherwise.
// Pinned 0.61.0; the newest version the end-to-end tests passed against is
// 0.61.0 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "@google/gemini-cli", Args: []string{"--version"}, Pinned: "0.61.0", NewestProven: "0.61.0"}
}
