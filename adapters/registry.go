// Package adapters holds the harness registry and the interfaces a harness
// implements (harness.go); each harness lives in a folder of its own
// (adapters/<harness>) and owns everything lifeloop knows
// about it: its manifest (an honest statement of what lifeloop provides
// for it) and the tests that prove it, how to recognise it from a command
// line, how a launch must be adjusted, its files, parser and hooks.
//
// This package itself names no harness: it parses launcher prefixes (env,
// node, npx …), builds the shared manifest, and answers the generic
// packages through the optional interfaces. The registry is explicit:
// adapters/builtin.Default lists every harness in a fixed order; nothing
// registers itself.
package adapters

import (
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// Conformance is the registry's posture for an adapter (seed 000,
// "Manifest registry").
type Conformance string

const (
	// ConformanceV1 adapters have every non-unavailable
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

// Adapter is one harness in a registry: its identity and evidence, and
// the harness plug-in behind them. Adapters are built by New; callers
// must not modify them.
type Adapter struct {
	// ID is the stable wire adapter_id.
	ID string
	// Aliases are other names Lookup accepts.
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
	// OrgLoopHarness is the harness's name in OrgLoop's vocabulary, or
	// "" (other).
	OrgLoopHarness string

	h     Harness
	names []string
	// argvPayloads: launch placements that leave the payload body in
	// argv are allowed (WithArgvPayloads).
	argvPayloads bool
}

// Harness returns the harness plug-in behind the adapter.
func (a *Adapter) Harness() Harness { return a.h }

// Manifest returns a fresh copy of the adapter's manifest; callers may
// modify it.
func (a *Adapter) Manifest() contract.AdapterManifest { return a.h.Manifest() }

// PrepareLaunch returns the command line lifeloop should start for argv
// (the harness's LaunchPreparer; most return argv unchanged). argv itself
// is never modified.
func (a *Adapter) PrepareLaunch(argv []string) []string {
	p, ok := a.h.(LaunchPreparer)
	if !ok {
		return slices.Clone(argv)
	}
	return p.PrepareLaunch(slices.Clone(argv), parseLaunch(argv).argStart)
}

// ReadyText is what the harness's TUI draws once it takes typed keys
// (InputReadyText), or "".
func (a *Adapter) ReadyText() string {
	if r, ok := a.h.(InputReadyText); ok {
		return r.ReadyText()
	}
	return ""
}

// StopSignal is the signal a renewal stops the harness with first
// (Relauncher.StopSignal), and true; SIGTERM and false for a harness
// lifeloop cannot relaunch.
func (a *Adapter) StopSignal() (syscall.Signal, bool) {
	if r, ok := a.h.(Relauncher); ok {
		return r.StopSignal(), true
	}
	return syscall.SIGTERM, false
}

// Telemetry returns the harness's telemetry, or nil when lifeloop cannot
// read its files.
func (a *Adapter) Telemetry() Telemetry {
	t, _ := a.h.(Telemetry)
	return t
}

// Hooks returns the harness's native hooks, or nil when it has none
// lifeloop can serve.
func (a *Adapter) Hooks() *hooks.Spec {
	if n, ok := a.h.(NativeHooks); ok {
		return n.Hooks()
	}
	return nil
}

// HookBridge returns the harness's per-launch hook bridge, or nil.
func (a *Adapter) HookBridge() HookBridge {
	b, _ := a.h.(HookBridge)
	return b
}

// LaunchHooks returns the hooks the harness's hook bridge installs in
// launch b and the frame events they report natively (HookChooser): by
// default all of them.
func (a *Adapter) LaunchHooks(b BridgeTarget) (*hooks.Spec, []contract.Event) {
	if c, ok := a.h.(HookChooser); ok {
		return c.LaunchHooks(b)
	}
	hb := a.HookBridge()
	if hb == nil {
		return nil, nil
	}
	return hb.Hooks(), hb.BridgedFrameEvents()
}

// BridgeEnv returns the variables the harness's hook bridge adds to its
// environment for one launch (BridgeEnviron), or nil.
func (a *Adapter) BridgeEnv(b BridgeTarget) ([]string, error) {
	e, ok := a.h.(BridgeEnviron)
	if !ok {
		return nil, nil
	}
	return e.BridgeEnv(b)
}

// HostInstaller returns how `host apply` installs the harness's hooks,
// or nil.
func (a *Adapter) HostInstaller() HostInstaller {
	h, _ := a.h.(HostInstaller)
	return h
}

// PinSession returns argv choosing a new harness session id and the id,
// when the harness lets a launch choose one and argv does not already;
// else argv unchanged and "".
func (a *Adapter) PinSession(argv []string) ([]string, string) {
	p, ok := a.h.(SessionPinner)
	if !ok {
		return argv, ""
	}
	return p.PinSession(argv, parseLaunch(argv).argStart)
}

// ResumedSession returns the harness session argv continues ("" for the
// harness's latest of the folder) and true, when the harness can say.
func (a *Adapter) ResumedSession(argv []string) (string, bool) {
	r, ok := a.h.(SessionResumer)
	if !ok {
		return "", false
	}
	return r.ResumedSession(argv, parseLaunch(argv).argStart)
}

// Registry is an ordered set of adapters with unique ids and aliases.
type Registry struct {
	adapters []*Adapter
	byName   map[string]*Adapter // ids and aliases
	byCmd    map[string]*Adapter // executable and package names
}

// New builds a registry from harnesses, in order. It fails when an id or
// alias is empty or used twice, or when no generic adapter is present.
// The built-in registry is adapters/builtin.Default.
func New(harnesses ...Harness) (*Registry, error) {
	r := &Registry{byName: map[string]*Adapter{}, byCmd: map[string]*Adapter{}}
	for _, h := range harnesses {
		a := AdapterOf(h)
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

// AdapterOf returns the registry entry of one harness, outside any
// registry (for tests of a harness's own folder).
func AdapterOf(h Harness) *Adapter {
	d := h.Describe()
	return &Adapter{
		ID: d.ID, Aliases: d.Aliases, DisplayName: d.DisplayName, Conformance: d.Conformance,
		Evidence: h.Evidence(), OrgLoopHarness: d.OrgLoopHarness, h: h, names: d.Names,
	}
}

// All returns the adapters in registry order.
func (r *Registry) All() []*Adapter { return slices.Clone(r.adapters) }

// IDsWith returns, in registry order, the ids of the adapters for which
// has is true (e.g. those with telemetry), for messages that list them.
func (r *Registry) IDsWith(has func(*Adapter) bool) []string {
	var ids []string
	for _, a := range r.adapters {
		if has(a) {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

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
