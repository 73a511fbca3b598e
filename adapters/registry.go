// Package adapters knows each harness lifeloop can wrap: its manifest (an
// honest statement of what lifeloop provides for it), how to recognise it
// from a command line, how a launch must be adjusted, and which of its
// manifest claims are proven by which test.
//
// The registry is explicit: Default lists every adapter in a fixed order;
// nothing registers itself.
package adapters

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
)

// Conformance is the registry's posture for an adapter (seed 000,
// "Manifest registry").
type Conformance string

const (
	// ConformanceV1 adapters (claude, codex) have every non-unavailable
	// manifest claim paired with a test that proves it; the registry test
	// enforces the pairing through Adapter.Evidence.
	ConformanceV1 Conformance = "v1_conformance"
	// ConformancePre adapters ship manifests whose claims are not yet
	// verified end to end.
	ConformancePre Conformance = "pre_conformance"
)

// GenericID is the adapter used for any command no other adapter
// recognises.
const GenericID = "generic"

// Adapter describes one harness. Adapters are values built by Default;
// callers must not modify them.
type Adapter struct {
	// ID is the stable wire adapter_id.
	ID string
	// Aliases are other names Lookup accepts (e.g. "claude-code").
	Aliases []string
	// DisplayName is the human-facing label.
	DisplayName string
	// Conformance is the registry posture (v1 or pre-conformance).
	Conformance Conformance
	// Evidence maps each manifest claim that is not `unavailable` to the
	// Go test that proves it. Keys name the claim:
	//   lifecycle_events.<event>/<mode>   e.g. lifecycle_events.session.started/launcher_wrapper
	//   placement.<class>                 e.g. placement.pre_session
	//   context_pressure, receipts.lifeloop_synthesized, receipts.receipt_ledger
	//   session_identity.<id>             e.g. session_identity.harness_session_id
	//   renewal.reset.<kind>, renewal.continuation.<kind>
	// Values are test function names (e.g. TestRunEmitsSessionStarted).
	Evidence map[string]string
	// ExitCommand is what typed at the harness's prompt ends the session
	// cleanly ("/exit" for Claude Code, "/quit" for Codex), or "".
	ExitCommand string
	// TelemetryKind names the transcript format the telemetry package
	// parses for this harness ("claude", "codex"), or "" for none.
	TelemetryKind string

	// names are the executable basenames and npm package names that
	// identify the harness on a command line.
	names []string
	// manifest builds a fresh manifest.
	manifest func() contract.AdapterManifest
	// prepare adjusts a launch; nil leaves argv unchanged.
	prepare func(argv []string, argStart int) []string
}

// Manifest returns a fresh copy of the adapter's manifest; callers may
// modify it.
func (a *Adapter) Manifest() contract.AdapterManifest { return a.manifest() }

// PrepareLaunch returns the command line lifeloop should start for argv.
// Most adapters return argv unchanged; Codex adds --no-daemon to an
// interactive launch (see codexPrepare). argv itself is never modified.
func (a *Adapter) PrepareLaunch(argv []string) []string {
	out := slices.Clone(argv)
	if a.prepare == nil {
		return out
	}
	return a.prepare(out, parseLaunch(argv).argStart)
}

// Registry is an ordered set of adapters with unique ids and aliases.
type Registry struct {
	adapters []*Adapter
	byName   map[string]*Adapter // ids and aliases
	byCmd    map[string]*Adapter // executable and package names
}

// Default returns the built-in registry: claude, codex, gemini, opencode,
// pi, hermes, openclaw, generic — in that order. Each call builds a new
// registry.
func Default() *Registry {
	r, err := New(claude(), codex(), gemini(), opencode(), pi(), hermes(), openclaw(), generic())
	if err != nil {
		// The built-in set is fixed; TestDefaultRegistry proves New accepts it.
		panic(err)
	}
	return r
}

// New builds a registry from adapters, in order. It fails when an id or
// alias is empty or used twice, or when no generic adapter is present.
func New(adapters ...*Adapter) (*Registry, error) {
	r := &Registry{byName: map[string]*Adapter{}, byCmd: map[string]*Adapter{}}
	for _, a := range adapters {
		for _, n := range append([]string{a.ID}, a.Aliases...) {
			if n == "" {
				return nil, fmt.Errorf("adapter %q has an empty id or alias", a.ID)
			}
			if prev, dup := r.byName[n]; dup {
				return nil, fmt.Errorf("adapter name %q is used by both %q and %q", n, prev.ID, a.ID)
			}
			r.byName[n] = a
		}
		for _, n := range a.names {
			if prev, dup := r.byCmd[n]; dup {
				return nil, fmt.Errorf("command name %q is claimed by both %q and %q", n, prev.ID, a.ID)
			}
			r.byCmd[n] = a
		}
		r.adapters = append(r.adapters, a)
	}
	if _, ok := r.byName[GenericID]; !ok {
		return nil, fmt.Errorf("registry has no %q adapter for unrecognised commands", GenericID)
	}
	return r, nil
}

// All returns the adapters in registry order.
func (r *Registry) All() []*Adapter { return slices.Clone(r.adapters) }

// IDs returns the adapter ids in registry order.
func (r *Registry) IDs() []string {
	ids := make([]string, len(r.adapters))
	for i, a := range r.adapters {
		ids[i] = a.ID
	}
	return ids
}

// Lookup finds an adapter by id or alias (exact, case-sensitive).
func (r *Registry) Lookup(id string) (*Adapter, error) {
	if a, ok := r.byName[id]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown adapter %q; known: %s", id, strings.Join(r.IDs(), ", "))
}

// Resolve picks the adapter for a command line (see parseLaunch for the
// shapes recognised); it returns the generic adapter when nothing
// matches. Resolve never fails.
func (r *Registry) Resolve(argv []string) *Adapter {
	for _, n := range parseLaunch(argv).names {
		if a, ok := r.byCmd[n]; ok {
			return a
		}
		if a, ok := r.byCmd[strings.ToLower(n)]; ok {
			return a
		}
	}
	return r.byName[GenericID]
}

// ArgStart is the index in argv of the harness's first own argument: past
// the program and any launcher (env, node, npx …) in front of it. Arguments
// lifeloop adds for one launch are inserted there.
func ArgStart(argv []string) int { return parseLaunch(argv).argStart }
