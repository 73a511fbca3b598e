package launcher

import (
	"errors"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Every start of the harness is planned by one function,
// launchRecipe.plan, in one order — the session's first launch, each
// relaunch of a renewal and a renewal's fallback to the person's own
// command line alike:
//
//  1. adapters.Adapter.PrepareLaunch, on the person's command line or on
//     the renewal's (adapters.Adapter.RelaunchArgv);
//  2. the hook bridge: the first launch's arguments, checked again for
//     every relaunch, so a bridge file that became unreadable after the
//     first launch is left out of a relaunch as it is left out of a first
//     launch (the harness starts without it and one capability.degraded
//     says so);
//  3. the payloads placed at launch, decided by the one placement
//     resolver (adapters.Adapter.PlaceLaunchPayloads over contract's
//     PlacementSite.Resolve, which the router uses at a hook too);
//  4. the bridge's arguments inserted;
//  5. the session pin (adapters.SessionPinner), where telemetry follows
//     a session the launch chooses: a harness started into a new session
//     gets a pinned id, and a relaunch then needs a new watcher for its
//     file, while a resumed harness chooses its session itself;
//  6. the placement moved off the command line into private files
//     (adapters.PlacementExternalizer), with the harness's environment,
//     which it may complete for this start (PlacementFiles.Setenv).
//
// The environment it starts from already carries the hook bridge's
// variables (adapters.BridgeEnviron), the same at every start.

// launchRecipe is what every start of the session's harness shares.
type launchRecipe struct {
	ad *adapters.Adapter
	// bridge are the hook bridge's arguments for the first launch (none
	// without one); bridgeAt checks that bridge again for a relaunch's
	// command line and returns its arguments (nil: not checked again).
	// A session that started without the bridge relaunches without it.
	bridge   []string
	bridgeAt func(argv []string) ([]string, error)
	// pin pins the harness session where the adapter can.
	pin bool
	// files keeps placement text out of the command line; env is the
	// harness's environment (nil: the supervisor's).
	files *placementFiles
	env   []string
}

// launchInput is what one start of the harness is planned from.
type launchInput struct {
	kind adapters.LaunchKind
	// argv is the person's command line (a first launch, a renewal's
	// fallback) or the renewal's (adapters.Adapter.RelaunchArgv), before
	// PrepareLaunch.
	argv []string
	// payloads go on the command line where the launch takes them; the
	// plan's placement says which did.
	payloads []contract.PayloadEnvelope
}

// launchPlan is one start of the harness: its command line, environment
// (nil: the supervisor's), pinned harness session id ("" when none) and
// the payloads it placed.
type launchPlan struct {
	argv, env []string
	pinned    string
	placement adapters.LaunchPlacement
	// bridgeUnavailable says why the hook bridge of the session is not
	// in this start; nil when it is, or when there is none.
	bridgeUnavailable *adapters.BridgeUnavailable
}

// plan plans one start of the harness, in the order above. Its errors
// are the placement's (adapters.Adapter.PlaceLaunchPayloads), a bridge
// check's that failed otherwise than BridgeUnavailable, and the private
// files'.
func (r launchRecipe) plan(in launchInput) (launchPlan, error) {
	p := launchPlan{argv: in.argv, env: r.env, placement: adapters.LaunchPlacement{Argv: in.argv, Rest: in.payloads}}
	if r.ad == nil {
		return p, nil
	}
	prepared := r.ad.PrepareLaunch(in.argv)
	bridge := r.bridge
	if in.kind != adapters.LaunchFirst && len(bridge) > 0 && r.bridgeAt != nil {
		var err error
		if bridge, err = r.bridgeAt(prepared); err != nil {
			if !errors.As(err, &p.bridgeUnavailable) {
				return launchPlan{}, err
			}
			bridge = nil
		}
	}
	var err error
	if p.placement, err = r.ad.PlaceLaunchPayloads(prepared, in.kind, in.payloads); err != nil {
		return launchPlan{}, err
	}
	p.argv = adapters.InsertArgs(p.placement.Argv, bridge)
	if r.pin {
		p.argv, p.pinned = r.ad.PinSession(p.argv)
	}
	if r.files != nil {
		var set []string
		t := r.files.target(r.env)
		t.Setenv = func(name, value string) { set = append(set, name+"="+value) }
		if p.argv, err = r.ad.ExternalizePlacement(p.argv, t); err != nil {
			return launchPlan{}, err
		}
		p.env = replaceEnv(r.env, set)
	}
	return p, nil
}
