package seal

import (
	"context"
	"errors"
	"maps"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// TestAWrapperLostInARenewalsGapEndsOnce: a wrapper lost after a renewal
// recorded its harness's stop (session.ending/ended, renewal_step
// ending/ended) — and, in one case, its relaunch's session.starting —
// is sealed (ledger: wrapper_lost, session.json: lost, HCP: PAUSED), and
// the continuation (`run --continue-session`) that finishes the renewal
// and runs on to the harness's exit leaves every projection with one
// start and one end per incarnation, and the ledger, OrgLoop and HCP
// saying the same end. Before this was covered the sealed end closed the
// first incarnation, so the continuation was numbered 1 and OrgLoop got
// the renewal's stop, the sealed end and the continuation's end for two
// starts.
func TestAWrapperLostInARenewalsGapEndsOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []string // renewal steps the lost wrapper recorded
	}{
		{"after the relaunch's session.starting", []string{"ending", "ended", "starting"}},
		{"after the harness's stop", []string{"ending", "ended"}},
		// Lost while the renewal stopped its harness (between its
		// session.ending and the stop's record): the seal records that
		// stop, and the continuation finishes the renewal from its
		// relaunch (`run --continue-session` moves renewal.json past the
		// recorded stop: RenewalStopped). Before, the sealed end closed
		// the incarnation, so the continuation was numbered 1 and OrgLoop
		// got the relaunch's start (.r1) with no end and the
		// continuation's end (.c1) with no start.
		{"after the renewal's session.ending", []string{"ending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			rec, release := newSession(t, root)
			for _, step := range tc.steps {
				routeAll(t, root, rec.ID, renewalMoment(step, 0))
			}
			release()
			sealed, err := Check(root, rec, Options{Registry: builtin.Default()})
			if err != nil {
				t.Fatal(err)
			}
			if sealed.State != statedir.StateLost {
				t.Errorf("session.json after the loss says %s, want lost", sealed.State)
			}
			prior := receipts(t, root, rec.ID)
			checkCoherent(t, prior)
			if last := lastEnd(prior); len(tc.steps) == 3 && last.TelemetrySummary[contract.SummaryReason] != ReasonWrapperLost {
				t.Errorf("the ledger's last end after the loss has reason %v, want %s", last.TelemetrySummary[contract.SummaryReason], ReasonWrapperLost)
			}
			if got := hcpState(rec.ID, prior); got != hcp.StatePaused {
				t.Errorf("HCP after the loss: %s, want %s (kept for a continuation)", got, hcp.StatePaused)
			}
			checkIncarnations(t, rec.ID, prior, false)

			// The continuation as the launcher runs it: numbered by
			// Continuation, finishing the renewal, then the harness
			// exits 0.
			n := Continuation(prior)
			var rest []moment.Moment
			if len(tc.steps) < 3 {
				rest = append(rest, renewalMoment("starting", n))
			} else {
				// The relaunch's harness session was sealed: the
				// continuation opens its own (launcher: Interrupted).
				if Interrupted(prior) != 1 {
					t.Errorf("Interrupted: %d, want renewal 1", Interrupted(prior))
				}
				rest = append(rest, moment.Moment{Event: contract.EventSessionStarting})
			}
			rest = append(rest, renewalMoment("started", n))
			end := map[string]any{contract.SummaryPhase: "completed", contract.SummaryOutcome: "success", contract.SummaryReason: "exit_code_0", contract.SummaryExitStatus: 0}
			if n > 0 {
				end[contract.SummaryContinuation] = n
			}
			rest = append(rest, moment.Moment{Event: contract.EventSessionEnded, Summary: end})
			routeAll(t, root, rec.ID, rest...)

			all := receipts(t, root, rec.ID)
			checkCoherent(t, all)
			checkIncarnations(t, rec.ID, all, true)
			if got := hcpState(rec.ID, all); got != hcp.StateCompleted {
				t.Errorf("HCP after the continuation: %s, want %s", got, hcp.StateCompleted)
			}
			if last := lastEnd(all); last.TelemetrySummary[contract.SummaryOutcome] != "success" {
				t.Errorf("the ledger's last end: %v, want success", last.TelemetrySummary)
			}
		})
	}
}

// renewalMoment is the moment renewal attempt 1 records at step, as
// wrapper continuation n records it (n 0: the session's first wrapper).
func renewalMoment(step string, n int) moment.Moment {
	sum := map[string]any{contract.SummaryReason: contract.StoppedByRenewal, "renewal_attempt": 1, contract.SummaryRenewalStep: step, "resume": true}
	if n > 0 {
		sum[contract.SummaryContinuation] = n
		sum["renewal_recovered"] = true
	}
	ev := map[string]contract.Event{"ending": contract.EventSessionEnding, "ended": contract.EventSessionEnded,
		"starting": contract.EventSessionStarting, "started": contract.EventSessionStarted}[step]
	if step == "ended" {
		maps.Copy(sum, map[string]any{contract.SummaryPhase: "stopped", contract.SummaryOutcome: "cancelled", contract.SummarySignal: 15})
	}
	return moment.Moment{Event: ev, Summary: sum}
}

func routeAll(t *testing.T, root, id string, ms ...moment.Moment) {
	t.Helper()
	p, err := pipeline.Open(pipeline.Options{StateDir: root, Session: id, Adapter: builtin.Default().Resolve(nil), Mode: contract.ModeLauncherWrapper})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, m := range ms {
		if _, err := p.Route(context.Background(), m); err != nil {
			t.Fatal(err)
		}
	}
}

func lastEnd(rs []contract.LifecycleReceipt) contract.LifecycleReceipt {
	var last contract.LifecycleReceipt
	for _, r := range rs {
		if r.Event == contract.EventSessionEnded {
			last = r
		}
	}
	return last
}

func hcpState(id string, rs []contract.LifecycleReceipt) string {
	p := hcp.NewProjector(id)
	for _, r := range rs {
		p.Project(r)
	}
	return p.State()
}

// checkIncarnations projects rs into OrgLoop events: no incarnation (the
// session part of a dedupe key) may have more than one start or one
// end, and when whole, each has exactly one of each; the last terminal
// event must say what the ledger's last end says.
func checkIncarnations(t *testing.T, id string, rs []contract.LifecycleReceipt, whole bool) {
	t.Helper()
	type life struct{ starts, ends int }
	lives := map[string]*life{}
	var keys []string
	var lastTerminal contract.OrgLoopLifecycle
	for _, r := range rs {
		ev, err := contract.ProjectOrgLoop(r, contract.OrgLoopOptions{SessionID: id, Harness: "other"})
		if errors.Is(err, contract.ErrNoOrgLoopPhase) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		lc := ev.Payload.Lifecycle
		keys = append(keys, lc.DedupeKey)
		inc := contract.OrgLoopIncarnation(r, id)
		if lives[inc] == nil {
			lives[inc] = &life{}
		}
		switch {
		case lc.Terminal:
			lives[inc].ends++
			lastTerminal = lc
		case lc.Phase == contract.PhaseStarted:
			lives[inc].starts++
		}
	}
	for inc, l := range lives {
		if l.starts > 1 || l.ends > 1 || whole && (l.starts != 1 || l.ends != 1) {
			t.Errorf("incarnation %s: %d starts and %d ends (keys %v)", inc, l.starts, l.ends, keys)
		}
	}
	if whole && string(lastTerminal.Phase) != lastEnd(rs).TelemetrySummary[contract.SummaryPhase] {
		t.Errorf("OrgLoop's last terminal event says %s, the ledger's last end %v", lastTerminal.Phase, lastEnd(rs).TelemetrySummary[contract.SummaryPhase])
	}
}

// checkCoherent checks docs/contract.md's stream rules on a wrapped
// ledger (as the e2e tests' checker does): each harness session, opened
// by session.starting, has at most one session.started and exactly one
// session.ended, failed when it never started, and nothing of it follows
// its session.ended.
func checkCoherent(t *testing.T, rs []contract.LifecycleReceipt) {
	t.Helper()
	type segment struct{ started, ended int }
	var segs []*segment
	for i, r := range rs {
		if r.Event == contract.EventSessionStarting {
			if len(segs) > 0 && segs[len(segs)-1].ended == 0 {
				t.Errorf("receipt %d: session.starting before the harness session before it ended", i)
			}
			segs = append(segs, &segment{})
			continue
		}
		if len(segs) == 0 {
			continue
		}
		cur := segs[len(segs)-1]
		if cur.ended > 0 {
			t.Errorf("receipt %d: %s after session.ended", i, r.Event)
		}
		switch r.Event {
		case contract.EventSessionStarted:
			cur.started++
		case contract.EventSessionEnded:
			cur.ended++
			if cur.started == 0 && r.Status != contract.StatusFailed {
				t.Errorf("receipt %d: session.ended of a harness session that never started is not failed", i)
			}
		}
	}
	for n, s := range segs {
		if s.started > 1 || s.ended != 1 {
			t.Errorf("harness session %d: %d session.started, %d session.ended", n+1, s.started, s.ended)
		}
	}
}
