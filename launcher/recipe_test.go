package launcher

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/openclaw"
	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestLaunchRecipeOneOrder: the first launch and a relaunch get their
// command line from the same plan, in the same order — after the
// placement, the hook bridge's arguments (once), the session pin, then
// the placement moved into a private file — and a relaunch checks the
// bridge again instead of reusing the first launch's arguments.
func TestLaunchRecipeOneOrder(t *testing.T) {
	ad := adapters.AdapterOf(claude.Harness{})
	files := &placementFiles{dir: t.TempDir()}
	defer files.remove()
	checked := 0
	r := launchRecipe{ad: ad, bridge: []string{"--settings", "/s/bridge.json"}, pin: true, files: files, env: []string{"HOME=" + t.TempDir()},
		bridgeAt: func([]string) ([]string, error) { checked++; return []string{"--settings", "/s/bridge.json"}, nil }}
	pay := testutil.Payload("pay_1", "SECRET-3f1a", contract.AcceptablePlacement{Placement: contract.PlacementDeveloperEquivalentFrame, Requirement: contract.RequirementRequired})
	for _, kind := range []adapters.LaunchKind{adapters.LaunchFirst, adapters.LaunchFresh} {
		p, err := r.plan(launchInput{kind: kind, argv: []string{"claude", "-p", "hi"}, payloads: []contract.PayloadEnvelope{pay}})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.placement.Placed) != 1 || p.placement.Target != contract.ManifestPreSession {
			t.Errorf("%s: placement %+v, want the payload in pre_session", kind, p.placement)
		}
		if p.pinned == "" || !slices.Contains(p.argv, p.pinned) {
			t.Errorf("%s %q: not pinned (%q)", kind, p.argv, p.pinned)
		}
		if strings.Contains(strings.Join(p.argv, " "), "SECRET-3f1a") {
			t.Errorf("%s %q: the placement is still on the command line", kind, p.argv)
		}
		if n := strings.Count(strings.Join(p.argv, " "), "/s/bridge.json"); n != 1 {
			t.Errorf("%s %q: bridge arguments %d times, want once", kind, p.argv, n)
		}
	}
	if checked != 1 {
		t.Errorf("the bridge was checked %d times for one relaunch, want 1", checked)
	}
}

// TestRelaunchWithoutAnUnreadableBridge: a bridge whose check fails at a
// relaunch (adapters.BridgeUnavailable: its file became unreadable) is
// left out of the relaunch's command line, and the plan says why; any
// other failure fails the plan.
func TestRelaunchWithoutAnUnreadableBridge(t *testing.T) {
	ad := adapters.AdapterOf(claude.Harness{})
	gone := &adapters.BridgeUnavailable{Reason: "/s/bridge.ts cannot be read"}
	r := launchRecipe{ad: ad, bridge: []string{"--settings", "/s/bridge.json"},
		bridgeAt: func([]string) ([]string, error) { return nil, gone }}
	p, err := r.plan(launchInput{kind: adapters.LaunchResume, argv: []string{"claude", "--resume", "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.argv, "--settings") || p.bridgeUnavailable != gone {
		t.Errorf("relaunch %q, unavailable %v: want no bridge and why", p.argv, p.bridgeUnavailable)
	}
	r.bridgeAt = func([]string) ([]string, error) { return nil, errors.New("boom") }
	if _, err := r.plan(launchInput{kind: adapters.LaunchFresh, argv: []string{"claude"}}); err == nil {
		t.Error("a bridge check that failed otherwise: no error")
	}
	// A session that started without a bridge is not checked again.
	r.bridge = nil
	if p, err := r.plan(launchInput{kind: adapters.LaunchFresh, argv: []string{"claude"}}); err != nil || p.bridgeUnavailable != nil {
		t.Errorf("no bridge at the first launch: %v, %v", p.bridgeUnavailable, err)
	}
}

// TestLaunchRecipeEnvironment: a placement the harness reads through its
// environment is set there for each start, from the same base — the
// user's value and the hook bridge's variables — so a relaunch names its
// own placement file only, and the base is not modified.
func TestLaunchRecipeEnvironment(t *testing.T) {
	ad := adapters.AdapterOf(opencode.Harness{})
	files := &placementFiles{dir: t.TempDir()}
	defer files.remove()
	base := []string{"HOME=/h", `OPENCODE_CONFIG_CONTENT={"model":"p/m","plugin":["file:///b.js"]}`}
	r := launchRecipe{ad: ad, files: files, env: slices.Clone(base)}
	var values []string
	for range 2 {
		p, err := r.plan(launchInput{kind: adapters.LaunchFresh, argv: []string{"opencode", "run", "hi"}, payloads: []contract.PayloadEnvelope{testutil.Payload("pay_1", "b", contract.AcceptablePlacement{Placement: contract.PlacementDeveloperEquivalentFrame, Requirement: contract.RequirementRequired})}})
		if err != nil {
			t.Fatal(err)
		}
		argv, env := p.argv, p.env
		if !slices.Equal(argv, []string{"opencode", "run", "hi"}) {
			t.Errorf("command line %q", argv)
		}
		v := adapters.EnvValue(env, "OPENCODE_CONFIG_CONTENT")
		if strings.Count(strings.Join(env, "\n"), "OPENCODE_CONFIG_CONTENT=") != 1 || !strings.Contains(v, `"model":"p/m"`) || !strings.Contains(v, `"plugin":["file:///b.js"]`) || strings.Count(v, "launch-placement-") != 1 {
			t.Errorf("environment %q", env)
		}
		values = append(values, v)
	}
	if values[0] == values[1] {
		t.Errorf("the relaunch kept the first start's file: %q", values)
	}
	if !slices.Equal(r.env, base) {
		t.Errorf("base environment changed: %q", r.env)
	}
}

// TestBridgePlaces: a payload waits for the hook bridge only where one of
// its hooks can place it at that moment; a bridge that only reports
// moments takes none, and one with a prompt hook alone none at the
// session's start.
func TestBridgePlaces(t *testing.T) {
	if bridgePlaces(adapters.AdapterOf(opencode.Harness{}), contract.EventFrameOpening) {
		t.Error("a bridge without a placing hook takes payloads")
	}
	if !bridgePlaces(adapters.AdapterOf(claude.Harness{}), contract.EventFrameOpening) || !bridgePlaces(adapters.AdapterOf(claude.Harness{}), contract.EventSessionStarted) {
		t.Error("a bridge with session-start and prompt-submit hooks does not take payloads at both")
	}
	oc := adapters.AdapterOf(openclaw.Harness{})
	if bridgePlaces(oc, contract.EventSessionStarted) || !bridgePlaces(oc, contract.EventFrameOpening) {
		t.Error("a bridge with a prompt hook alone: want payloads at frame.opening only")
	}
}

// TestPayloadRefusedWhereNoHookPlacesIt: a payload for the session's
// start that no launch placement and no hook can take is refused before
// the launch, saying what would place it, rather than waiting for a hook
// that never comes; at the first prompt the same adapter takes it.
func TestPayloadRefusedWhereNoHookPlacesIt(t *testing.T) {
	oc := adapters.AdapterOf(openclaw.Harness{})
	pay := []contract.PayloadEnvelope{{PayloadID: "pay_1", PayloadKind: "continuation", Body: contract.Ptr("b")}}
	argv := []string{"openclaw", "agent", "--local", "-m", "hi"}
	for _, at := range []contract.Event{contract.EventSessionStarted, contract.EventFrameOpening} {
		o := Options{Payloads: pay, PayloadsAt: at}
		placed, err := oc.PlaceLaunchPayloads(oc.PrepareLaunch(argv), adapters.LaunchFirst, launchPayloads(o))
		if err != nil {
			t.Fatal(err)
		}
		atHook, err := hookPayloads(o, oc, placed, true)
		switch {
		case at == contract.EventSessionStarted && (err == nil || !strings.Contains(err.Error(), "--payload-at frame")):
			t.Errorf("a session payload without a session hook: %v, want a refusal naming --payload-at frame", err)
		case at == contract.EventFrameOpening && (err != nil || len(atHook) != 1):
			t.Errorf("a payload at the first prompt: %v, %+v", err, atHook)
		}
	}
}
