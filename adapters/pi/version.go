package pi

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of
// @mariozechner/pi-coding-agent (or of its successor,
// @earendil-works/pi-coding-agent: Pi's 1.x line is published under that
// name, the old one is frozen at 0.73.1) above the executable names the
// version; `pi --version` prints it otherwise.
// Pinned 1.6.0, the successor's, run with Node >= 22.19; the end-to-end
// tests passed against 0.73.1 to 1.6.0 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "@mariozechner/pi-coding-agent", Successor: "@earendil-works/pi-coding-agent", Args: []string{"--version"}, Pinned: "1.6.0", NewestProven: "1.6.0"}
}
