package launcher

import (
	"fmt"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/adapters/gemini"
	"github.com/lifeloop/lifeloop/adapters/openclaw"
	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/adapters/pi"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestOnePlacementResolver: for each of the six harnesses and each launch
// kind (first, resume, fresh), where the launch's command line places a
// payload is the one resolver's decision (adapters.Adapter.LaunchSite,
// contract.PlacementSite.Resolve) and PlaceLaunchPayloads places exactly
// what it decides; a payload the launch cannot carry is left for the hook
// of session.started, decided by the same resolver (contract.HookSite).
// A cell is the slot, then "+dev"/"+prompt" when a developer-frame or a
// pre-prompt payload goes on the command line; "none" when the harness
// has no relaunch for that kind.
func TestOnePlacementResolver(t *testing.T) {
	const hid = "11111111-2222-3333-4444-555555555555"
	type cells map[adapters.LaunchKind]string
	tests := []struct {
		name string
		ad   *adapters.Adapter
		argv []string
		want cells
	}{
		{"claude", adapters.AdapterOf(claude.Harness{}), []string{"claude"},
			cells{"first": "pre_session+dev+prompt", "resume": "pre_session+dev+prompt", "fresh": "pre_session+dev+prompt"}},
		{"codex", adapters.AdapterOf(codex.Harness{}), []string{"codex"},
			cells{"first": "pre_session+dev+prompt", "resume": "", "fresh": "pre_session+dev+prompt"}},
		// Codex's resumed thread takes the text as its first prompt, in
		// argv: only with the caller's opt-in, and only at a relaunch.
		{"codex argv-ok", adapters.AdapterOf(codex.Harness{}).WithArgvPayloads(), []string{"codex"},
			cells{"first": "pre_session+dev+prompt", "resume": "pre_frame_leading+prompt", "fresh": "pre_session+dev+prompt"}},
		{"gemini", adapters.AdapterOf(gemini.Harness{}), []string{"gemini"},
			cells{"first": "", "resume": "", "fresh": ""}},
		{"gemini argv-ok", adapters.AdapterOf(gemini.Harness{}).WithArgvPayloads(), []string{"gemini"},
			cells{"first": "", "resume": "pre_frame_leading+prompt", "fresh": "pre_frame_leading+prompt"}},
		{"opencode", adapters.AdapterOf(opencode.Harness{}), []string{"opencode"},
			cells{"first": "pre_session+dev+prompt", "resume": "pre_session+dev+prompt", "fresh": "pre_session+dev+prompt"}},
		{"pi", adapters.AdapterOf(pi.Harness{}), []string{"pi"},
			cells{"first": "pre_session+dev+prompt", "resume": "pre_session+dev+prompt", "fresh": "pre_session+dev+prompt"}},
		{"openclaw", adapters.AdapterOf(openclaw.Harness{}), []string{"openclaw", "tui"},
			cells{"first": "", "resume": "none", "fresh": "none"}},
	}
	for _, tt := range tests {
		for _, kind := range []adapters.LaunchKind{adapters.LaunchFirst, adapters.LaunchResume, adapters.LaunchFresh} {
			t.Run(fmt.Sprintf("%s/%s", tt.name, kind), func(t *testing.T) {
				argv := tt.argv
				if kind != adapters.LaunchFirst {
					var ok bool
					if argv, ok = tt.ad.RelaunchArgv(tt.argv, hid, kind == adapters.LaunchResume); !ok {
						if tt.want[kind] != "none" {
							t.Fatalf("no relaunch, want %q", tt.want[kind])
						}
						return
					}
				}
				argv = tt.ad.PrepareLaunch(argv)
				site := tt.ad.LaunchSite(argv, kind)
				got := string(site.Slot)
				for _, pc := range []contract.PlacementClass{contract.PlacementDeveloperEquivalentFrame, contract.PlacementPrePromptFrame} {
					p := testutil.Payload("pay_1", "body", contract.AcceptablePlacement{Placement: pc, Requirement: contract.RequirementRequired})
					p.PayloadKind = "continuation"
					d := site.Resolve(tt.ad.Manifest(), p)
					pl, err := tt.ad.PlaceLaunchPayloads(argv, kind, []contract.PayloadEnvelope{p})
					if err != nil {
						t.Fatalf("%s: %v", pc, err)
					}
					onArgv := d.Outcome == contract.PlacementOutcomeDelivered && d.Target != nil
					if onArgv != (len(pl.Placed) == 1) || onArgv == (len(pl.Rest) == 1) || onArgv && pl.Target != site.Slot {
						t.Errorf("%s: resolver says %s via %v, placement placed %d (target %q), left %d", pc, d.Outcome, d.Target, len(pl.Placed), pl.Target, len(pl.Rest))
					}
					if onArgv {
						got += map[contract.PlacementClass]string{contract.PlacementDeveloperEquivalentFrame: "+dev", contract.PlacementPrePromptFrame: "+prompt"}[pc]
					}
					hook := contract.HookSite(contract.EventSessionStarted).Resolve(tt.ad.Manifest(), p)
					if want := contract.ResolvePlacement(tt.ad.Manifest(), p, contract.PlacementRoutes(contract.EventSessionStarted)); hook.Outcome != want.Outcome {
						t.Errorf("%s: the hook site decides %s, the routes of session.started %s", pc, hook.Outcome, want.Outcome)
					}
				}
				if got != tt.want[kind] {
					t.Errorf("%q: %q, want %q", argv, got, tt.want[kind])
				}
			})
		}
	}
}
