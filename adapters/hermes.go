package adapters

import "github.com/lifeloop/lifeloop/contract"

// hermes is Nous Research's Hermes Agent (PyPI hermes-agent, binary
// `hermes`). Any executable named `hermes` resolves here, including
// unrelated programs of that name; `lifeloop run --adapter generic`
// overrides the choice. No transcript parser or hook bridge exists for it.
func hermes() *Adapter {
	return &Adapter{
		ID:          "hermes",
		DisplayName: "Hermes Agent",
		Conformance: ConformancePre,
		Evidence:    wrapperEvidence(),
		names:       []string{"hermes", "hermes-agent"},
		manifest: func() contract.AdapterManifest {
			return wrapperManifest("hermes", "Hermes Agent", contract.RoleWorker)
		},
	}
}
