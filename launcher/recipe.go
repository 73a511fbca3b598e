package launcher

import (
	"errors"

	"github.com/lifeloop/lifeloop/adapters"
)

// A start of the harness is planned in one order, the same for the
// session's first launch and for every relaunch of a renewal:
//
//  1. adapters.Adapter.PrepareLaunch, on the person's command line (the
//     first launch) or on the renewal's (adapters.Adapter.RelaunchArgv);
//  2. the payloads placed at launch, decided by the one placement
//     resolver (adapters.Adapter.PlaceLaunchPayloads, contract's
//     PlacementSite.Resolve, which the hook path uses too): Launch
//     places the first launch's (placePayloads), the renewal's
//     orchestrator a relaunch's;
//  3. launchRecipe.plan: the hook bridge's arguments — checked for every
//     start, so a bridge file that became unreadable after the first
//     launch is left out of a relaunch as it would be of a first launch
//     (the harness starts without it and one capability.degraded says
//     so); the session pin (adapters.SessionPinner), where telemetry
//     follows a session the launch chooses: a harness started into a new
//     session gets a pinned id, and a relaunch then needs a new watcher
//     for its file, while a resumed harness chooses its session itself;
//     and the placement moved off the command line into private files
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

// launchPlan is one start of the harness: its command line, environment
// (nil: the supervisor's) and pinned harness session id ("" when none).
type launchPlan struct {
	argv, env []string
	pinned    string
	// bridgeUnavailable says why the hook bridge of the session is not
	// in this start; nil when it is, or when there is none.
	bridgeUnavailable *adapters.BridgeUnavailable
}

// plan completes placed, a start's command line with its launch
// placements (steps 1 and 2 above), for a start of kind.
func (r launchRecipe) plan(kind adapters.LaunchKind, placed []string) (launchPlan, error) {
	p := launchPlan{argv: placed, env: r.env}
	bridge := r.bridge
	if kind != adapters.LaunchFirst && len(bridge) > 0 && r.bridgeAt != nil {
		var err error
		if bridge, err = r.bridgeAt(placed); err != nil {
			if !errors.As(err, &p.bridgeUnavailable) {
				return launchPlan{}, err
			}
			bridge = nil
		}
	}
	p.argv = adapters.InsertArgs(p.argv, bridge)
	if r.pin {
		p.argv, p.pinned = r.ad.PinSession(p.argv)
	}
	if r.files != nil {
		var set []string
		t := r.files.target(r.env)
		t.Setenv = func(name, value string) { set = append(set, name+"="+value) }
		var err error
		if p.argv, err = r.ad.ExternalizePlacement(p.argv, t); err != nil {
			return launchPlan{}, err
		}
		p.env = replaceEnv(r.env, set)
	}
	return p, nil
}
