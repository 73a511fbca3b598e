package launcher

import (
	"slices"

	"github.com/lifeloop/lifeloop/adapters"
)

// launchRecipe builds the harness's command line, in one order, for the
// first launch and for every relaunch of a renewal. The command line it
// starts from already carries the payloads placed at launch (the
// launch's placePayloads, a renewal's plan; each decides and records its
// placements); then, in this order:
//
//  1. the hook bridge's arguments, once;
//  2. the session pin, where telemetry follows a session the launch
//     chooses (adapters.SessionPinner): a harness started into a new
//     session gets a pinned id, and a relaunch then needs a new watcher
//     for its file; a resumed harness chooses its session itself and
//     writes on to the file already followed, and a harness without
//     pinning is followed to its new file by discovery;
//  3. the placement moved off the command line into private files
//     (adapters.PlacementExternalizer), with the harness's environment,
//     which it may complete for this start (PlacementFiles.Setenv).
//
// The environment it starts from already carries the hook bridge's
// variables (adapters.BridgeEnviron), the same at every start.
type launchRecipe struct {
	ad *adapters.Adapter
	// bridge are the hook bridge's launch arguments (none without one).
	bridge []string
	// pin pins the harness session where the adapter can.
	pin bool
	// files keeps placement text out of the command line; env is the
	// harness's environment (nil: the supervisor's).
	files *placementFiles
	env   []string
}

// argv completes placed, a command line with its launch placements, and
// returns it with the environment to start it with (nil: the
// supervisor's) and the pinned harness session id ("" when none).
func (r launchRecipe) argv(placed []string) (argv, env []string, pinned string, err error) {
	argv = placed
	if len(r.bridge) > 0 && !slices.Contains(argv, r.bridge[len(r.bridge)-1]) {
		argv = adapters.InsertArgs(argv, r.bridge)
	}
	if r.pin {
		argv, pinned = r.ad.PinSession(argv)
	}
	env = r.env
	if r.files != nil {
		var set []string
		t := r.files.target(r.env)
		t.Setenv = func(name, value string) { set = append(set, name+"="+value) }
		if argv, err = r.ad.ExternalizePlacement(argv, t); err != nil {
			return nil, nil, "", err
		}
		env = replaceEnv(r.env, set)
	}
	return argv, env, pinned, nil
}
