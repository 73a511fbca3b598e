package codex

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of @openai/codex above
// the executable names the version; `codex --version` prints it otherwise.
// Pinned 0.171.0; the newest version the end-to-end tests passed against is
// 0.171.0, the oldest 0.169.0 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "@openai/codex", Args: []string{"--version"}, Pinned: "0.171.0", NewestProven: "0.171.0"}
}
