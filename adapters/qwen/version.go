package qwen

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of
// @qwen-code/qwen-code above the executable names the version; `qwen
// --version` prints it otherwise. Pinned 0.24.4; the newest version the
// end-to-end tests passed against is 0.24.4 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "@qwen-code/qwen-code", Args: []string{"--version"}, Pinned: "0.24.4", NewestProven: "0.24.4"}
}
