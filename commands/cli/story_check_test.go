package cli_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/launcher"
)

// story is what one run of the property test left: the session's ledger,
// the life of every harness process the session started, and the
// session's final record.
type story struct {
	id       string
	receipts []contract.LifecycleReceipt
	lives    []harnessLife
	record   statedir.SessionRecord
	refused  []refusedEmit
	// earlyEnd names the first step, not one that ends the story, after
	// which lifeloop run had exited ("" when none).
	earlyEnd string
}

// refusedEmit is an emit the command refused (exit code not 0): the
// ledger held after receipts before it and upTo when it returned.
type refusedEmit struct {
	event       contract.Event
	step, code  int
	after, upTo uint64
}

// harnessLife is one fake harness process: the ledger held startN
// receipts when it began and exitN when it ended (exited false: it never
// said it ended, e.g. it was killed).
type harnessLife struct {
	pid           int
	startN, exitN uint64
	exited        bool
	code          int
	// ends counts the lines that said it ended (one, or more when a
	// signal reached a forked copy of the script).
	ends int
}

// storyProperty is one property every story must have.
type storyProperty struct {
	name  string
	check func(s story) error
}

// storyProperties are the properties of docs/reliability.md's property
// test, in the order they are judged.
var storyProperties = []storyProperty{
	{"hcp-seed-001", checkStoryHCP},
	{"orgloop-one-start-one-end-per-incarnation", checkStoryOrgLoop},
	{"no-close-while-harness-runs", checkStoryNoCloseWhileRunning},
	{"coherent", checkStoryCoherent},
	{"renewal-closes-cut-off-turns", checkStoryRenewalClosesTurns},
	{"refused-emit-records-nothing", checkStoryRefusedEmits},
	{"one-ending-everywhere", checkStoryEndingAgrees},
	{"ends-only-at-its-end", checkStoryEndsOnlyAtItsEnd},
}

// checkStoryEndsOnlyAtItsEnd: the session ends only when its harness
// exits by itself or it is aborted: no emit, pause, renewal (one whose
// relaunch fails among them) or continuation ends it.
func checkStoryEndsOnlyAtItsEnd(s story) error {
	if s.earlyEnd != "" {
		return fmt.Errorf("the session ended before the story's end: after %s", s.earlyEnd)
	}
	return nil
}

// checkStoryRenewalClosesTurns: a turn (frame) still open when a renewal
// stops its harness is closed, frame.ended, before the renewal's
// session.ended: the relaunched harness never finishes it.
func checkStoryRenewalClosesTurns(s story) error {
	open := map[string]uint64{}
	var errs []string
	for _, r := range s.receipts {
		id := storyFrameID(r)
		switch {
		case r.Status == contract.StatusFailed:
		case r.Event == contract.EventFrameOpening && id != "":
			open[id] = seqOf(r)
		case r.Event == contract.EventFrameEnded && id != "":
			delete(open, id)
		case r.Event == contract.EventSessionStarting:
			clear(open) // a new harness session: what the last one left is judged at its end
		case r.Event == contract.EventSessionEnded && r.TelemetrySummary["renewal_step"] == "ended":
			for f, at := range open {
				errs = append(errs, fmt.Sprintf("frame %s (opened at receipt %d) is never closed: the renewal's session.ended (receipt %d) cuts it off", f, at, seqOf(r)))
			}
			clear(open)
		}
	}
	return joinErrs(errs)
}

// checkStoryRefusedEmits: an emit that was refused recorded nothing of
// its own (docs/contract.md: a refused emit never changes the session's
// story): no receipt of its event appeared while the command ran.
func checkStoryRefusedEmits(s story) error {
	var errs []string
	for _, e := range s.refused {
		for _, r := range s.receipts {
			if seq := seqOf(r); seq > e.after && seq <= e.upTo && r.Event == e.event {
				errs = append(errs, fmt.Sprintf("step %d: the refused emit of %s (exit %d) recorded receipt %d (%s %s)", e.step, e.event, e.code, seq, r.Event, r.Status))
			}
		}
	}
	return joinErrs(errs)
}

// checkStoryEndingAgrees: session.json, HCP and OrgLoop tell the same
// ending: completed, aborted or failed in session.json is COMPLETED,
// ABORTED or FAILED in HCP's session_closed and completed, stopped or
// failed in OrgLoop's last terminal event.
func checkStoryEndingAgrees(s story) error {
	wantHCP := map[statedir.SessionState]string{statedir.StateCompleted: hcp.StateCompleted, statedir.StateAborted: hcp.StateAborted, statedir.StateFailed: hcp.StateFailed}
	wantOrg := map[statedir.SessionState]contract.LifecyclePhase{statedir.StateCompleted: contract.PhaseCompleted, statedir.StateAborted: contract.PhaseStopped, statedir.StateFailed: contract.PhaseFailed}
	st := s.record.State
	if _, ok := wantHCP[st]; !ok {
		return fmt.Errorf("session.json ends %s, want completed, aborted or failed", st)
	}
	p := hcp.NewProjector(s.id)
	closed := ""
	var last contract.LifecyclePhase
	lastSeq := uint64(0)
	for _, r := range s.receipts {
		for _, e := range p.Project(r) {
			if e.Payload.EventType == hcp.SessionClosed {
				closed, _ = e.Payload.Data["final_state"].(string)
			}
		}
		if ev, err := contract.ProjectOrgLoop(r, contract.OrgLoopOptions{SessionID: s.id, Harness: contract.HarnessClaudeCode}); err == nil && ev.Payload.Lifecycle.Terminal {
			last, lastSeq = ev.Payload.Lifecycle.Phase, seqOf(r)
		}
	}
	var errs []string
	if closed != wantHCP[st] {
		errs = append(errs, fmt.Sprintf("session.json says %s but HCP closes the session %q", st, closed))
	}
	if last != wantOrg[st] {
		errs = append(errs, fmt.Sprintf("session.json says %s but OrgLoop's last terminal event (receipt %d) is %q", st, lastSeq, last))
	}
	return joinErrs(errs)
}

// checkStoryHCP: the HCP projection passes seed 001's table
// (hcp.CheckStream), the session is closed once its last harness ended,
// and every renewal is told: RUNNING → PAUSED reason renewal at its
// session.ending (or PAUSED already, when paused), a checkpoint_created per payload and PAUSED → RUNNING
// (renewed, or recovered_from_checkpoint) at its session.started.
func checkStoryHCP(s story) error {
	p := hcp.NewProjector(s.id)
	var all []hcp.Envelope
	var errs []string
	for _, r := range s.receipts {
		before := p.State()
		es := p.Project(r)
		all = append(all, es...)
		step, _ := r.TelemetrySummary["renewal_step"].(string)
		if r.Status == contract.StatusFailed {
			continue
		}
		switch {
		case r.Event == contract.EventSessionEnding && step == "ending":
			// A session the person had paused is PAUSED already.
			if !hasTransition(es, hcp.StatePaused, "renewal") && !(before == hcp.StatePaused && p.State() == hcp.StatePaused) {
				errs = append(errs, fmt.Sprintf("receipt %d (a renewal's session.ending): no state_changed RUNNING → PAUSED reason renewal (state before it %s, events %s)", seqOf(r), before, eventTypes(es)))
			}
		case r.Event == contract.EventSessionStarted && step == "started":
			if !hasTransition(es, hcp.StateRunning, "renewed") && !hasTransition(es, hcp.StateRunning, "recovered_from_checkpoint") {
				errs = append(errs, fmt.Sprintf("receipt %d (a renewal's session.started): no state_changed PAUSED → RUNNING reason renewed (state before it %s, events %s): HCP never learns of the renewal", seqOf(r), before, eventTypes(es)))
			}
			if n := countType(es, hcp.CheckpointCreated); n != len(r.PayloadReceipts) {
				errs = append(errs, fmt.Sprintf("receipt %d (a renewal's session.started with %d payload receipts): %d checkpoint_created", seqOf(r), len(r.PayloadReceipts), n))
			}
		}
	}
	if err := hcp.CheckStream(all); err != nil {
		errs = append([]string{err.Error()}, errs...)
	}
	if len(all) > 0 && all[len(all)-1].Payload.EventType != hcp.SessionClosed {
		errs = append(errs, fmt.Sprintf("the session ended (session.json %s) but its HCP stream is not closed (state %s)", s.record.State, p.State()))
	}
	return joinErrs(errs)
}

func hasTransition(es []hcp.Envelope, to, reason string) bool {
	for _, e := range es {
		if e.Payload.EventType == hcp.StateChanged && e.Payload.Data["to_state"] == to && e.Payload.Data["reason"] == reason {
			return true
		}
	}
	return false
}

func countType(es []hcp.Envelope, t string) int {
	n := 0
	for _, e := range es {
		if e.Payload.EventType == t {
			n++
		}
	}
	return n
}

func eventTypes(es []hcp.Envelope) string {
	var out []string
	for _, e := range es {
		d := e.Payload.EventType
		if d == hcp.StateChanged {
			d += fmt.Sprintf("(%v→%v %v)", e.Payload.Data["from_state"], e.Payload.Data["to_state"], e.Payload.Data["reason"])
		}
		out = append(out, d)
	}
	return "[" + strings.Join(out, " ") + "]"
}

// checkStoryOrgLoop: projected to OrgLoop, every incarnation (the first
// launch, each renewal's relaunch, each continuation after a lost
// wrapper: one per harness process started, but a relaunch that failed
// before it started) has exactly one started and
// then one terminal event — started and terminal events alternate, as
// many of each as harness processes — and no two of them share a dedupe
// key (a deduping consumer keeps them all). A renewal's stop and
// relaunch share the incarnation part <session>.r<N> of their keys, with
// different phases (contract.OrgLoopIncarnation). A launch that failed
// before its harness was known to start has one failed terminal event
// and no started one.
func checkStoryOrgLoop(s story) error {
	var errs []string
	seen := map[string]uint64{}
	open := false
	var started, closing int
	var last uint64
	segStarted := false // a session.started since the last session.starting
	for _, r := range s.receipts {
		switch r.Event {
		case contract.EventSessionStarting:
			segStarted = false
		case contract.EventSessionStarted:
			segStarted = segStarted || r.Status != contract.StatusFailed
		}
		ev, err := contract.ProjectOrgLoop(r, contract.OrgLoopOptions{SessionID: s.id, Harness: contract.HarnessClaudeCode})
		if errors.Is(err, contract.ErrNoOrgLoopPhase) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Sprintf("receipt %d: %v", seqOf(r), err))
			continue
		}
		lc := ev.Payload.Lifecycle
		if lc.Phase == contract.PhaseActive {
			continue
		}
		seq := seqOf(r)
		if first, dup := seen[lc.DedupeKey]; dup {
			errs = append(errs, fmt.Sprintf("receipt %d (%s) posts dedupe key %s again (first at receipt %d): a deduping consumer drops it", seq, r.Event, lc.DedupeKey, first))
		} else {
			seen[lc.DedupeKey] = seq
		}
		if lc.Terminal && !open && !segStarted && r.Status == contract.StatusFailed {
			// A launch that failed before its harness was known to start
			// (a lost wrapper's sealed end, a launch error): OrgLoop is told
			// it failed, with no incarnation to close.
			continue
		}
		switch {
		case lc.Terminal && !open:
			errs = append(errs, fmt.Sprintf("receipt %d (%s, reason %s): a terminal event with no incarnation open (the last one closed at receipt %d)", seq, r.Event, lc.Reason, last))
		case !lc.Terminal && open:
			errs = append(errs, fmt.Sprintf("receipt %d (%s): started while the incarnation started at receipt %d is not closed", seq, r.Event, last))
		}
		if lc.Terminal {
			closing++
		} else {
			started++
		}
		open, last = !lc.Terminal, seq
	}
	if n := incarnations(s); started != n || closing != n {
		errs = append(errs, fmt.Sprintf("%d harness processes started (%d of them incarnations) but %d OrgLoop started and %d terminal events, want one of each per incarnation", len(s.lives), n, started, closing))
	}
	return joinErrs(errs)
}

// incarnations counts the harness processes that are incarnations: all
// but a relaunch that failed before it started, whose harness session
// (from the session.starting before the process to the next) has no
// session.started.
func incarnations(s story) int {
	n := 0
	for _, l := range s.lives {
		var starting uint64
		for _, r := range s.receipts {
			if r.Event == contract.EventSessionStarting && seqOf(r) <= l.startN {
				starting = seqOf(r)
			}
		}
		started := starting == 0
		for _, r := range s.receipts {
			seq := seqOf(r)
			if seq <= starting {
				continue
			}
			if r.Event == contract.EventSessionStarting {
				break
			}
			if r.Event == contract.EventSessionStarted && r.Status != contract.StatusFailed {
				started = true
			}
		}
		if started {
			n++
		}
	}
	return n
}

// checkStoryNoCloseWhileRunning: no session.ended, no OrgLoop terminal
// event and no HCP session_closed is recorded while a harness process of
// the session runs (between its start and its exit).
func checkStoryNoCloseWhileRunning(s story) error {
	p := hcp.NewProjector(s.id)
	var errs []string
	for _, r := range s.receipts {
		es := p.Project(r)
		var what []string
		if r.Event == contract.EventSessionEnded {
			what = append(what, "session.ended")
		}
		if ev, err := contract.ProjectOrgLoop(r, contract.OrgLoopOptions{SessionID: s.id, Harness: contract.HarnessClaudeCode}); err == nil && ev.Payload.Lifecycle.Terminal {
			what = append(what, "OrgLoop "+string(ev.Payload.Lifecycle.Phase))
		}
		if countType(es, hcp.SessionClosed) > 0 {
			what = append(what, "HCP session_closed")
		}
		if len(what) == 0 {
			continue
		}
		seq := seqOf(r)
		for _, l := range s.lives {
			if !l.exited {
				continue // killed without a word: when it ended is unknown
			}
			if seq > l.startN && seq <= l.exitN {
				errs = append(errs, fmt.Sprintf("receipt %d (%s, reason %v) closes the session (%s) while harness pid %d runs (it started after receipt %d and exited after receipt %d)",
					seq, r.Event, r.TelemetrySummary[contract.SummaryReason], strings.Join(what, ", "), l.pid, l.startN, l.exitN))
			}
		}
	}
	return joinErrs(errs)
}

// checkStoryCoherent applies the stream guarantees the end-to-end tests
// check on every ledger (e2e/lifeloop_test.go, checkCoherent): per frame
// each stage at most once and in causal order; the wrapped session is a
// sequence of harness sessions, each opened by session.starting, with at
// most one session.started (none when its launch failed), at most one
// session.ending and exactly one session.ended, nothing of it after its
// session.ended, no frame before its session.started and none after its
// session.ending; a renewal's session.starting links to the
// session.started before it.
func checkStoryCoherent(s story) error {
	stage := map[contract.Event]int{contract.EventFrameOpening: 1, contract.EventFrameOpened: 2, contract.EventFrameEnding: 3, contract.EventFrameEnded: 4}
	frames := map[string]int{}
	for _, r := range s.receipts {
		k := stage[r.Event]
		id := storyFrameID(r)
		if k == 0 || id == "" {
			continue
		}
		if frames[id] >= k {
			return fmt.Errorf("receipt %d: %s of frame %s after stage %d of it", seqOf(r), r.Event, id, frames[id])
		}
		frames[id] = k
	}
	type segment struct {
		starting, started, ending, ended int
		renewal                          bool // opened by a renewal's relaunch
	}
	var segs []segment
	var cur *segment
	var lastStarted string
	for _, r := range s.receipts {
		ev := string(r.Event)
		if storyHookCallFailed(r) {
			continue
		}
		if r.Event == contract.EventSessionStarting {
			if cur != nil && cur.ended == 0 {
				return fmt.Errorf("receipt %d: session.starting before the harness session before it ended", seqOf(r))
			}
			if r.TelemetrySummary[contract.SummaryReason] == contract.StoppedByRenewal && lastStarted != "" && (r.ParentReceiptID == nil || *r.ParentReceiptID != lastStarted) {
				return fmt.Errorf("receipt %d: the relaunch's session.starting links to %v, not to the session.started before it (%s)", seqOf(r), strPtr(r.ParentReceiptID), lastStarted)
			}
			segs = append(segs, segment{renewal: r.TelemetrySummary[contract.SummaryReason] == contract.StoppedByRenewal})
			cur = &segs[len(segs)-1]
		}
		lifecycle := strings.HasPrefix(ev, "session.") || strings.HasPrefix(ev, "frame.")
		if cur == nil {
			if lifecycle {
				return fmt.Errorf("receipt %d: %s before any session.starting", seqOf(r), ev)
			}
			continue
		}
		if cur.ended > 0 && r.Event != contract.EventSessionStarting && lifecycle {
			return fmt.Errorf("receipt %d: %s (status %s) after session.ended", seqOf(r), ev, r.Status)
		}
		switch r.Event {
		case contract.EventSessionStarting:
			cur.starting++
		case contract.EventSessionStarted:
			cur.started++
			lastStarted = r.ReceiptID
		case contract.EventSessionEnding:
			cur.ending++
		case contract.EventSessionEnded:
			cur.ended++
			if cur.started == 0 && r.Status != contract.StatusFailed {
				return fmt.Errorf("receipt %d: session.ended of a harness session that never started is not failed", seqOf(r))
			}
		default:
			if strings.HasPrefix(ev, "frame.") && cur.started == 0 {
				return fmt.Errorf("receipt %d: %s before session.started", seqOf(r), ev)
			}
			if strings.HasPrefix(ev, "frame.") && cur.ending > 0 {
				return fmt.Errorf("receipt %d: %s after session.ending", seqOf(r), ev)
			}
		}
	}
	for n, sg := range segs {
		if sg.started > 1 || sg.ending > 1 || sg.ended != 1 {
			return fmt.Errorf("harness session %d: %d session.started, %d session.ending, %d session.ended (want 1, at most 1, 1)", n+1, sg.started, sg.ending, sg.ended)
		}
		// A first launch that never started may be continued (its
		// wrapper was lost before the harness was known to start), not
		// renewed.
		if sg.started == 0 && n == 0 && len(segs) > 1 && segs[1].renewal {
			return fmt.Errorf("harness session %d never started but was renewed", n+1)
		}
	}
	return nil
}

// storyFrameID is the frame a receipt belongs to: telemetry_summary.frame_id,
// else its "<frame>/<event>" event id.
func storyFrameID(r contract.LifecycleReceipt) string {
	if id, _ := r.TelemetrySummary["frame_id"].(string); id != "" {
		return id
	}
	if id, ok := strings.CutSuffix(r.EventID, "/"+string(r.Event)); ok {
		return id
	}
	return ""
}

// storyHookCallFailed reports a failed receipt host-hook recorded for a
// hook call that never reached its wrapper.
func storyHookCallFailed(r contract.LifecycleReceipt) bool {
	if r.Status != contract.StatusFailed {
		return false
	}
	for _, w := range r.Warnings {
		if w.Code == launcher.HookFailedWarning {
			return true
		}
	}
	return false
}

func seqOf(r contract.LifecycleReceipt) uint64 {
	if r.Sequence == nil {
		return 0
	}
	return *r.Sequence
}

func strPtr(p *string) string {
	if p == nil {
		return "<none>"
	}
	return *p
}

func joinErrs(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

// describeStory lists a story's receipts, one line each, for failures.
func describeStory(s story) string {
	var b strings.Builder
	for i := 0; i < len(s.receipts); i++ {
		r := s.receipts[i]
		sum := r.TelemetrySummary
		// A run of ticks with the same state and trigger is one line.
		n := 1
		for r.Event == contract.EventSupervisorTick && i+n < len(s.receipts) && sameTick(r, s.receipts[i+n]) {
			n++
		}
		if n > 1 {
			fmt.Fprintf(&b, "  %3d-%d %s ×%d state=%v trigger=%v\n", seqOf(r), seqOf(s.receipts[i+n-1]), r.Event, n, sum["state"], sum["trigger"])
			i += n - 1
			continue
		}
		fmt.Fprintf(&b, "  %3d %-20s %-8s", seqOf(r), r.Event, r.Status)
		for _, k := range []string{"reason", "renewal_step", "state", "trigger", "frame_id"} {
			if v, ok := sum[k]; ok {
				fmt.Fprintf(&b, " %s=%v", k, v)
			}
		}
		if r.FailureClass != nil {
			fmt.Fprintf(&b, " failure=%s", *r.FailureClass)
		}
		if len(r.PayloadReceipts) > 0 {
			fmt.Fprintf(&b, " payloads=%d", len(r.PayloadReceipts))
		}
		b.WriteString("\n")
	}
	for _, l := range s.lives {
		if l.exited {
			fmt.Fprintf(&b, "  harness pid %d: started after receipt %d, exited %d after receipt %d", l.pid, l.startN, l.code, l.exitN)
			if l.ends > 1 {
				fmt.Fprintf(&b, " (said so %d times)", l.ends)
			}
			b.WriteString("\n")
		} else {
			fmt.Fprintf(&b, "  harness pid %d: started after receipt %d, end unknown\n", l.pid, l.startN)
		}
	}
	fmt.Fprintf(&b, "  session.json: %s", s.record.State)
	if s.record.Exit != nil {
		fmt.Fprintf(&b, " (%s %s)", s.record.Exit.Phase, s.record.Exit.Reason)
	}
	return b.String()
}

func sameTick(a, b contract.LifecycleReceipt) bool {
	return b.Event == contract.EventSupervisorTick && a.TelemetrySummary["state"] == b.TelemetrySummary["state"] && a.TelemetrySummary["trigger"] == b.TelemetrySummary["trigger"]
}
