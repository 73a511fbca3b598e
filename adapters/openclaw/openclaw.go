// Package openclaw is OpenClaw (npm openclaw). lifeloop wraps it like any
// process; no transcript parser or hook bridge exists for it.
package openclaw

import (
	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Harness is OpenClaw to the registry.
type Harness struct{}

// Describe implements adapters.Harness.
func (Harness) Describe() adapters.Description {
	return adapters.Description{
		ID: "openclaw", DisplayName: "OpenClaw", Conformance: adapters.ConformancePre,
		Names: []string{"openclaw"},
	}
}

// Evidence implements adapters.Harness: process supervision only.
func (Harness) Evidence() map[string]string { return adapters.WrapperEvidence() }

// Manifest implements adapters.Harness.
func (Harness) Manifest() contract.AdapterManifest {
	return adapters.WrapperManifest("openclaw", "OpenClaw", contract.RoleWorker)
}
