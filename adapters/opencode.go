package adapters

import "github.com/lifeloop/lifeloop/contract"

// opencode is OpenCode (npm opencode-ai). lifeloop wraps it like any
// process; no transcript parser or hook bridge exists for it.
func opencode() *Adapter {
	return &Adapter{
		ID:          "opencode",
		DisplayName: "OpenCode",
		Conformance: ConformancePre,
		Evidence:    wrapperEvidence(),
		names:       []string{"opencode", "opencode-ai"},
		manifest: func() contract.AdapterManifest {
			return wrapperManifest("opencode", "OpenCode", contract.RolePrimaryWorker)
		},
	}
}
