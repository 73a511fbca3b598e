package adapters

import "github.com/lifeloop/lifeloop/contract"

// gemini is Google's Gemini CLI (npm @google/gemini-cli). lifeloop wraps
// it like any process; no transcript parser or hook bridge exists for it.
func gemini() *Adapter {
	return &Adapter{
		ID:          "gemini",
		Aliases:     []string{"gemini-cli"},
		DisplayName: "Gemini CLI",
		Conformance: ConformancePre,
		Evidence:    wrapperEvidence(),
		names:       []string{"gemini", "gemini-cli", "@google/gemini-cli"},
		manifest: func() contract.AdapterManifest {
			return wrapperManifest("gemini", "Gemini CLI", contract.RolePrimaryWorker)
		},
	}
}
