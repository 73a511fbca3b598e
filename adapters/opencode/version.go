package opencode

import "github.com/lifeloop/lifeloop/adapters"

// Version implements adapters.Versioned: the package.json of opencode-ai above
// the executable names the version; `opencode --version` prints it otherwise
// (OpenCode 2.x is not published to the npm registry, so its executable
// has no such package.json and is asked).
// Pinned 1.18.33, the last release on the npm registry; the newest version
// the end-to-end tests passed against is 1.18.33 (docs/harnesses.md).
func (Harness) Version() adapters.VersionSource {
	return adapters.VersionSource{
		Package: "opencode-ai", Args: []string{"--version"}, Pinned: "1.18.33", NewestProven: "1.18.33",
		Changes: []adapters.VersionChange{{Since: "2.0.0", What: v2Change}},
	}
}

// v2Change is what a session of OpenCode 2.x is reported with: a line
// lifeloop has not run, known to have changed the APIs its bridge uses.
const v2Change = "OpenCode 2.x changed its plugin and server APIs, which lifeloop's bridge plugin and renewal use (proven on 1.x only): frames, attention and renewal may be missing or wrong"
