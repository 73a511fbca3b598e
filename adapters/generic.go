package adapters

import "github.com/lifeloop/lifeloop/contract"

// generic stands for any command no other adapter recognises: lifeloop
// can only observe it as a process.
func generic() *Adapter {
	return &Adapter{
		ID:          GenericID,
		DisplayName: "Generic command",
		Conformance: ConformancePre,
		Evidence:    wrapperEvidence(),
		manifest: func() contract.AdapterManifest {
			return wrapperManifest(GenericID, "Generic command", contract.RoleWorker)
		},
	}
}
