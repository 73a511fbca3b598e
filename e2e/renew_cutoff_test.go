package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRenewClosesTheTurnItCutsOff: a turn under way when a renewal stops
// the harness is closed in the ledger: frame.ended with stop_reason
// renewal and outcome cancelled, before the renewal's session.ending, and
// every frame the harness session opened has its frame.ended. Claude Code
// is stopped with its permission dialog open; Codex in the middle of its
// answer (a shell command the model asked for, which Codex runs without
// asking, still running).
func TestRenewClosesTheTurnItCutsOff(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	for _, tc := range safeTUIs {
		var underWay *regexp.Regexp
		command := "touch cut-off-3b7e"
		switch tc.name {
		case "claude":
			underWay = tc.dialog
		case "codex":
			command = "sleep 120"
		default:
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{ToolCommand: command})
			env := testharness.NewHarnessEnv(t, mock)
			state := stateDir(t)
			term := tc.start(t, env, state)
			at := len(term.Output())
			prompt := "please " + mockmodel.DefaultToolTrigger + " now"
			term.Type(prompt)
			if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
				t.Fatal(err)
			}
			tc.send(term)
			if underWay != nil {
				waitOutputMatch(t, term, at, underWay)
			} else {
				waitMockRequests(t, term, mock, tc.kind, 1)
				waitReceipt(t, term, state, "frame.opening", 1)
				time.Sleep(time.Second) // the command runs
			}
			renewSafely(t, tc, env, term, state)

			_, rs := onlySession(t, state)
			ending := -1
			var cut []map[string]any
			opened, ended := map[string]bool{}, map[string]bool{}
			for i, r := range rs {
				id, _ := dig(r, "telemetry_summary", "frame_id").(string)
				switch r["event"] {
				case "session.ending":
					if ending < 0 && dig(r, "telemetry_summary", "renewal_step") == "ending" {
						ending = i
					}
				case "frame.opening", "frame.opened":
					opened[id] = true
				case "frame.ended":
					ended[id] = true
					if dig(r, "telemetry_summary", "stop_reason") == "renewal" {
						if ending >= 0 {
							t.Errorf("the cut-off turn's frame.ended comes after the renewal's session.ending: %v", eventsOf(rs))
						}
						cut = append(cut, r)
					}
				}
			}
			if len(cut) == 0 || dig(cut[0], "telemetry_summary", "outcome") != "cancelled" {
				t.Fatalf("no frame.ended closing the cut-off turn (stop_reason renewal, outcome cancelled): %v", eventsOf(rs))
			}
			for id := range opened {
				if !ended[id] {
					t.Errorf("frame %s opened and never ended: %v", id, eventsOf(rs))
				}
			}
			endSafeTUI(t, env, term)
		})
	}
}

// waitMockRequests waits until the mock has n requests of kind.
func waitMockRequests(t *testing.T, term *testharness.Terminal, mock *mockmodel.Server, kind string, n int) {
	t.Helper()
	for deadline := time.Now().Add(screenTimeout); len(mock.RequestsOfKind(kind)) < n; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("%d %s requests, want %d; screen:\n%s", len(mock.RequestsOfKind(kind)), kind, n, strings.TrimSpace(tailText(term.Output(), 1500)))
		}
	}
}
