// Package hermes is Nous Research's Hermes Agent (PyPI hermes-agent, binary
// `hermes`). Any executable named `hermes` resolves here, including
// unrelated programs of that name; `lifeloop run --adapter generic`
// overrides the choice. No transcript parser or hook bridge exists for it.
package hermes

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is Hermes Agent to the registry.
type Harness struct{}

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "hermes", DisplayName: "Hermes Agent", Conformance: adapters.ConformancePre,
		Names: []string{"hermes", "hermes-agent"},
	}
}

// Evidence implements adapters.Harness: process supervision only.
func (Harness) Evidence() map[string]string { return adapters.WrapperEvidence() }

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	return adapters.WrapperManifest("hermes", "Hermes Agent", contract.RoleWorker)
}
