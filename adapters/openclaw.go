package adapters

import "github.com/lifeloop/lifeloop/contract"

// openclaw is OpenClaw (npm openclaw). lifeloop wraps it like any
// process; no transcript parser or hook bridge exists for it.
func openclaw() *Adapter {
	return &Adapter{
		ID:          "openclaw",
		DisplayName: "OpenClaw",
		Conformance: ConformancePre,
		Evidence:    wrapperEvidence(),
		names:       []string{"openclaw"},
		manifest: func() contract.AdapterManifest {
			return wrapperManifest("openclaw", "OpenClaw", contract.RoleWorker)
		},
	}
}
