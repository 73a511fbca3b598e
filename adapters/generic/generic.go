// Package generic stands for any command no other harness recognises:
// lifeloop can only observe it as a process.
package generic

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is the generic command to the registry.
type Harness struct{}

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: adapters.GenericID, DisplayName: "Generic command", Conformance: adapters.ConformancePre,
	}
}

// Evidence implements adapters.Harness: process supervision only.
func (Harness) Evidence() map[string]string { return adapters.WrapperEvidence() }

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	return adapters.WrapperManifest(adapters.GenericID, "Generic command", contract.RoleWorker)
}
