package pi

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of
// @mariozechner/pi-coding-agent (or of its successor,
// @earendil-works/pi-coding-agent: Pi's 1.x line is published under that
// name, the old one is frozen at 0.73.1) above the executable names the
// version; `pi --version` prints it otherwise.
// Pinned and newest proven: 1.6.0, the successor's, run with Node >= 22.19
// (docs/harnesses.md); 0.73.1, the pin before 2026-12-03, is the oldest
// proven.
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{Package: "@mariozechner/pi-coding-agent", Successor: "@earendil-works/pi-coding-agent", Args: []string{"--version"}, Pinned: "1.6.0", NewestProven: "1.6.0"}
}
