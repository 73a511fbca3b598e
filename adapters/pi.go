package adapters

import "github.com/lifeloop/lifeloop/contract"

// pi is the Pi coding agent (npm @mariozechner/pi-coding-agent, binary
// `pi`). lifeloop wraps it like any process; no transcript parser or hook
// bridge exists for it.
func pi() *Adapter {
	return &Adapter{
		ID:          "pi",
		DisplayName: "Pi",
		Conformance: ConformancePre,
		Evidence:    wrapperEvidence(),
		names:       []string{"pi", "pi-coding-agent", "@mariozechner/pi-coding-agent"},
		manifest: func() contract.AdapterManifest {
			return wrapperManifest("pi", "Pi", contract.RolePrimaryWorker)
		},
	}
}
