// Package stream keeps the rules of a session's story (docs/contract.md,
// "One coherent stream"): whatever order the sources report in — the
// wrapper, the hook bridge, a harness's notify program, the transcript —
// a session's ledger tells one story.
//
// A Keeper is pure: it does no I/O, starts no goroutine and arms no
// timer. It has one door (step.go): it is told facts (Step) — a moment
// with its source, or the time passing, a hook call, the harness
// drained — and answers with the receipts to record, in order and linked
// to the receipts they follow (Ready, each acknowledged by Recorded);
// what it still holds and why (Holds); and when it next needs a Due fact
// (Next). Driver is the one loop around it that the callers — `run`'s
// supervisor, `watch`, `host-hook` — use: they give it a recorder and
// step facts; it records what is ready, saves new harness session ids
// through the caller and arms the caller's one timer.
//
// A ledger is a sequence of harness sessions, each opened by
// session.starting (the launch, or a renewal's relaunch). In each:
// session.started once, session.ending at most once, session.ended once.
// Per frame id: frame.opening, frame.opened, frame.ending, frame.ended
// each at most once and in that order. A compaction the harness
// identifies (its event id) is recorded once, whichever sources report
// it. A moment that repeats one already recorded, or that arrives after a
// later stage of its frame, is dropped (the ledger is append-only); a
// stage that was skipped is recorded, marked inferred, right before the
// later one that implies it, when the adapter's manifest declares that
// event for the integration mode.
package stream

import (
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/moment"
)

// Moment is one lifecycle fact offered to the keeper.
type Moment = moment.Moment

// HookFailedWarning marks the receipt `lifeloop host-hook` records when a
// hook call could not reach its wrapper: not a moment of the story.
const HookFailedWarning = "host_hook_failed"

// frameStages are the frame events in causal order.
var frameStages = []contract.Event{
	contract.EventFrameOpening, contract.EventFrameOpened,
	contract.EventFrameEnding, contract.EventFrameEnded,
}

// frameStage returns ev's position in frameStages (1-based), or 0.
func frameStage(ev contract.Event) int {
	for i, e := range frameStages {
		if e == ev {
			return i + 1
		}
	}
	return 0
}

// Config is what a keeper needs to know about its session.
type Config struct {
	// Manifest and Mode say which frame stages may be inferred: those the
	// manifest declares (support other than unavailable) for Mode.
	Manifest contract.AdapterManifest
	Mode     contract.IntegrationMode
	// Bridged are the frame events a hook bridge reports natively: the
	// transcript's report of one waits up to NativeWindow for the hook's.
	Bridged map[contract.Event]bool
	// Transcript says a transcript is read: a new harness session names
	// itself there. HookNamesSession says a hook reports session.started
	// with the harness's session id. Either makes session.started wait
	// (up to BindWait) for the harness to name its session.
	Transcript       bool
	HookNamesSession bool
	BindWait         time.Duration
	// Known are the harness session ids the session already had, and
	// Prior its receipts so far (a continued session, or a native session
	// recorded one hook call at a time): the stream goes on from them.
	Known []string
	Prior []contract.LifecycleReceipt
}

// NativeWindow is how long a transcript frame moment waits for the hook
// that reports the same moment when the bridge has been quiet (see
// hookArrived for when it waits longer). A bridge that reports from
// inside the harness (a plugin) answers late on a loaded machine: 2 s was
// missed by a one-shot's frame.opening in a full -race test run (load 6).
// Only a hook that never comes costs the wait; at the harness's exit the
// drain records what still waits at once.
const NativeWindow = 5 * time.Second

// BridgeQuiet is how long after the bridge's last call a transcript
// moment still waits for the hook's report of it (HookArrived).
const BridgeQuiet = 10 * time.Second

// NativeWaitMax bounds how long a transcript moment waits for a hook's
// report of it: a bridge that keeps calling without ever reporting the
// moment holds the stream no longer than this.
const NativeWaitMax = 20 * time.Second

// CompactionWindow is how long a transcript's identified compaction
// waits for the hook that reports the same compaction: a bridge that
// sends its reports one after the other can hold it behind the turn's
// end, which a busy wrapper answers late (seen: 5 s under the race
// detector on a loaded machine). Only a hook that never comes costs the
// wait.
const CompactionWindow = 10 * time.Second

// HookBindFactor stretches the bind wait when payloads wait for the
// session-start hook to place them: only that hook's receipt can carry
// them.
const HookBindFactor = 3

// Keeper keeps one session's stream coherent. It is not safe for
// concurrent use: one goroutine offers it moments.
type Keeper struct {
	cfg Config
	// declared are the frame events that may be inferred.
	declared map[contract.Event]bool
	// frames holds each frame's highest admitted stage.
	frames map[string]int
	// open are the frames admitted and not ended, oldest first.
	open []contract.FrameContext
	// keyed holds the event ids of the identified moments admitted.
	keyed map[string]bool
	// The current harness session's session.* moments so far.
	starting, started, ending, ended bool
	// launches counts the harness sessions opened (session.starting).
	launches int
	// resumed says the current harness session continues the one before
	// it (a resumed renewal): its transcript goes on, only a hook names it.
	resumed bool
	// lastHook is when the current launch's hook bridge last called.
	lastHook time.Time

	// The current harness session's receipts, for parent links, and the
	// receipt that opened each frame.
	startingReceipt, startedReceipt, endingReceipt string
	frameReceipts                                  map[string]string

	// harness is the latest harness session id; known are all the ids
	// the session has had.
	harness string
	known   map[string]bool
	// current is the id the current harness session's session.started
	// named (or the first bound after it, when it named none); switches
	// counts the harness's switches to a new harness session inside one
	// process.
	current  string
	switches int

	queue []held

	// The door (step.go): the facts stepped and not yet worked through,
	// the moments released and not yet admitted, those admitted and not
	// yet handed out by Ready (each read from its index on), and the
	// harness session ids bound for the first time since Bound was last
	// asked.
	todo                      []pending
	out, admitted             []outgoing
	todoAt, outAt, admittedAt int
	fresh                     []string
}

// New returns the keeper of a session configured by cfg.
func New(cfg Config) *Keeper {
	k := &Keeper{cfg: cfg, declared: map[contract.Event]bool{}, frames: map[string]int{},
		keyed: map[string]bool{}, frameReceipts: map[string]string{}, known: map[string]bool{}}
	for _, ev := range frameStages {
		if s, ok := cfg.Manifest.LifecycleEvents[ev]; ok && s.Support != contract.SupportUnavailable && s.Support != "" && slices.Contains(s.Modes, cfg.Mode) {
			k.declared[ev] = true
		}
	}
	return k
}

// resume takes up the stream where prior, the session's receipts so far
// (a continued session, or a native session recorded one hook call at a
// time), left it.
func (k *Keeper) resume(prior []contract.LifecycleReceipt) {
	for _, r := range prior {
		if hookCallFailed(r) {
			continue
		}
		m := Moment{Event: r.Event, Summary: r.TelemetrySummary, EventID: r.EventID}
		if r.HarnessSessionID != nil {
			m.HarnessSessionID = *r.HarnessSessionID
		}
		if id := priorFrameID(r); id != "" {
			m.Frame = &contract.FrameContext{FrameID: id}
		}
		k.admit(m)
		k.Recorded(m, r.ReceiptID)
	}
}

// remember seeds the harness session ids the session already had.
func (k *Keeper) remember(ids []string) {
	for _, id := range ids {
		k.known[id] = true
	}
}

// hookCallFailed reports the receipt host-hook records for a hook call
// that never reached a wrapper (not a lifecycle moment of the stream).
func hookCallFailed(r contract.LifecycleReceipt) bool {
	return r.Status == contract.StatusFailed && slices.ContainsFunc(r.Warnings, func(w contract.Warning) bool { return w.Code == HookFailedWarning })
}

// priorFrameID is the frame a recorded receipt belongs to: its
// telemetry_summary.frame_id, else its "<frame>/<event>" event id.
func priorFrameID(r contract.LifecycleReceipt) string {
	if id, ok := r.TelemetrySummary["frame_id"].(string); ok {
		return id
	}
	if frameStage(r.Event) > 0 {
		if id, ok := strings.CutSuffix(r.EventID, "/"+string(r.Event)); ok {
			return id
		}
	}
	return ""
}

// admit returns the moments to record for m, in order: none when the
// stream already tells m, else m preceded by the inferred stages of its
// frame it implies. The caller records them all, in order.
func (k *Keeper) admit(m Moment) []Moment {
	switch m.Event {
	case contract.EventSessionStarting:
		if k.starting && !k.started && !k.ending && !k.ended {
			return nil // the same launch again (a recovery repeating a step a killed wrapper recorded)
		}
		k.starting, k.started, k.ending, k.ended = true, false, false, false
		k.launches++
	case contract.EventSessionStarted:
		if k.switched(m) {
			return k.switchTo(m)
		}
		if k.started || k.ended {
			return nil
		}
		k.started = true
	case contract.EventSessionEnding:
		if k.ending || k.ended {
			return nil
		}
		k.ending = true
	case contract.EventSessionEnded:
		if k.ended {
			return nil
		}
		k.ended = true
	}
	if keyed(m) {
		if k.keyed[m.EventID] {
			return nil
		}
		k.keyed[m.EventID] = true
		return []Moment{m}
	}
	s := frameStage(m.Event)
	if s == 0 || m.Frame == nil {
		return []Moment{m}
	}
	id := m.Frame.FrameID
	have := k.frames[id]
	if have >= s {
		return nil
	}
	k.frames[id] = s
	k.trackOpen(*m.Frame, have, s)
	var out []Moment
	for j := have + 1; j < s; j++ {
		ev := frameStages[j-1]
		if k.declared[ev] {
			out = append(out, inferred(ev, m))
		}
	}
	return append(out, m)
}

// trackOpen notes that frame fc went from stage have to s.
func (k *Keeper) trackOpen(fc contract.FrameContext, have, s int) {
	switch {
	case s == len(frameStages):
		k.open = slices.DeleteFunc(k.open, func(o contract.FrameContext) bool { return o.FrameID == fc.FrameID })
	case have == 0:
		k.open = append(k.open, fc)
	}
}

// OpenFrames returns the frames admitted and not ended (no frame.ended),
// oldest first: the turns a stop of the harness cuts off.
func (k *Keeper) OpenFrames() []contract.FrameContext { return slices.Clone(k.open) }

// FrameOpen reports whether a turn is under way: a top-level frame
// admitted and not ended, or a top-level frame moment held back (a turn
// reported and not recorded yet).
func (k *Keeper) FrameOpen() bool {
	for _, fc := range k.open {
		if topLevel(fc) {
			return true
		}
	}
	for _, q := range k.queue {
		if q.m.Frame != nil && frameStage(q.m.Event) > 0 && topLevel(*q.m.Frame) {
			return true
		}
	}
	return false
}

// topLevel reports whether fc is a turn's frame, not a subcall's (a
// frame taken up from prior receipts has no class: top-level unless it
// names a parent).
func topLevel(fc contract.FrameContext) bool {
	return fc.FrameClass == contract.FrameTopLevel || (fc.FrameClass == "" && fc.ParentFrameID == nil)
}

// switched reports whether session.started m, reported by a hook, opens
// a new harness session inside the same process: the current harness
// session has started under another id and has not ended (the harness
// started a new conversation in place, e.g. a "clear" or "new" command;
// its session-end hook may have reported session.ending first).
func (k *Keeper) switched(m Moment) bool {
	src, _ := m.Summary["source"].(string)
	return src == "hook" && k.started && !k.ended &&
		k.current != "" && m.HarnessSessionID != "" && m.HarnessSessionID != k.current
}

// switchTo closes the current harness session and opens the one m names:
// session.ended (reason harness_session_switched; the process is still
// alive) for the old id, then session.starting and m for the new one,
// each numbered by the switch.
func (k *Keeper) switchTo(m Moment) []Moment {
	k.switches++
	old := k.current
	n := k.switches
	sum := func(extra map[string]any) map[string]any {
		out := map[string]any{
			contract.SummaryReason:        contract.HarnessSessionSwitched,
			contract.SummarySwitch:        n,
			"previous_harness_session_id": old,
			"harness_session_id":          m.HarnessSessionID,
		}
		for key, v := range extra {
			out[key] = v
		}
		return out
	}
	ended := Moment{
		Event: contract.EventSessionEnded, HarnessSessionID: old,
		EventID: old + "/" + string(contract.EventSessionEnded),
		Summary: sum(map[string]any{"source": "inferred", "inferred_from": string(m.Event),
			contract.SummaryPhase: string(contract.PhaseStopped), contract.SummaryOutcome: string(contract.LifecycleSuccess)}),
	}
	starting := Moment{
		Event: contract.EventSessionStarting, HarnessSessionID: m.HarnessSessionID,
		EventID: m.HarnessSessionID + "/" + string(contract.EventSessionStarting),
		Summary: sum(map[string]any{"source": "inferred", "inferred_from": string(m.Event)}),
	}
	m.Summary = cloneSummary(m.Summary)
	for key, v := range sum(nil) {
		if key != "harness_session_id" {
			m.Summary[key] = v
		}
	}
	k.starting, k.started, k.ending, k.ended = true, true, false, false
	k.launches++
	k.current = m.HarnessSessionID
	return []Moment{ended, starting, m}
}

// keyed reports whether m is an identified moment that is no frame
// stage: a compaction with an event id (a hook and the transcript may
// both report it, under the same id).
func keyed(m Moment) bool {
	return m.Event == contract.EventContextCompacted && m.EventID != "" && m.Frame == nil
}

// has reports whether the stream already tells frame moment m (or a
// later stage of its frame), or identified moment m.
func (k *Keeper) has(m Moment) bool {
	if keyed(m) {
		return k.keyed[m.EventID]
	}
	s := frameStage(m.Event)
	return s > 0 && m.Frame != nil && k.frames[m.Frame.FrameID] >= s
}

// inferred is stage ev of m's frame, implied by m.
func inferred(ev contract.Event, m Moment) Moment {
	fc := *m.Frame
	s := map[string]any{"source": "inferred", "inferred_from": string(m.Event), "frame_id": fc.FrameID}
	if fc.ParentFrameID != nil {
		s["parent_frame_id"] = *fc.ParentFrameID
	}
	return Moment{
		Event: ev, Frame: &fc, HarnessSessionID: m.HarnessSessionID,
		EventID: fc.FrameID + "/" + string(ev), Summary: s,
	}
}

// bind notes harness session id id, which later receipts carry. It
// reports whether the session never had it before (the caller saves it
// in the session record).
func (k *Keeper) bind(id string) bool {
	if id == "" {
		return false
	}
	k.harness = id
	if k.started && !k.ended && k.current == "" {
		k.current = id
	}
	if k.known[id] {
		return false
	}
	k.known[id] = true
	k.fresh = append(k.fresh, id)
	return true
}

// HarnessSession is the latest harness session id ("" before the harness
// named one, or after a fresh relaunch).
func (k *Keeper) HarnessSession() string { return k.harness }

// relaunch opens the next harness session of a renewal: resumed keeps
// the harness session id (the harness continues it), a fresh one waits
// for the relaunched harness to name its new session.
func (k *Keeper) relaunch(resumed bool) {
	k.resumed = resumed
	k.lastHook = time.Time{} // the relaunched harness has its own bridge
	if !resumed {
		k.harness = ""
	}
}

// nextHarnessSession opens the next harness session when no launch step
// of the caller's did (`watch` following the newer file of a resumed or
// renewed harness): its session.* moments are told again.
func (k *Keeper) nextHarnessSession() {
	k.started, k.ending, k.ended = false, false, false
}

// link completes admitted moment m for recording: the harness session id
// once known, the parent receipt it chains to, and its frame id in the
// summary.
func (k *Keeper) link(m Moment) Moment {
	if m.HarnessSessionID == "" {
		m.HarnessSessionID = k.harness
	}
	if m.Parent == nil {
		m.Parent = k.parentFor(m)
	}
	if m.Frame != nil && m.Summary["frame_id"] == nil {
		m.Summary = cloneSummary(m.Summary)
		m.Summary["frame_id"] = m.Frame.FrameID
	}
	return m
}

// Recorded notes that m was recorded as receipt id: the receipts later
// ones link to.
func (k *Keeper) Recorded(m Moment, id string) {
	switch m.Event {
	case contract.EventSessionStarting:
		k.startingReceipt, k.endingReceipt = id, ""
		if m.HarnessSessionID == "" {
			k.current = ""
		}
	case contract.EventSessionStarted:
		k.startedReceipt = id
		if m.HarnessSessionID != "" {
			k.current = m.HarnessSessionID
		}
	case contract.EventSessionEnded:
		if r, _ := m.Summary[contract.SummaryReason].(string); r == contract.HarnessSessionSwitched {
			k.switches = max(k.switches, summaryN(m.Summary[contract.SummarySwitch]))
		}
	case contract.EventSessionEnding:
		k.endingReceipt = id
	case contract.EventFrameOpening:
		if m.Frame != nil {
			k.frameReceipts[m.Frame.FrameID] = id
		}
	}
}

// links are the last recorded receipts later ones chain to.
type Links struct {
	Starting, Started, Ending string
	// Frames maps a frame id to the receipt that opened it.
	Frames map[string]string
}

// links returns the receipts later ones chain to.
func (k *Keeper) links() Links {
	f := make(map[string]string, len(k.frameReceipts))
	for id, r := range k.frameReceipts {
		f[id] = r
	}
	return Links{Starting: k.startingReceipt, Started: k.startedReceipt, Ending: k.endingReceipt, Frames: f}
}

// parentFor is the receipt m chains to: session.started to its
// session.starting (without one, as in `watch`, to the session.started
// before it), a relaunch's session.starting to the session.started before
// it, session.ended to session.ending, a frame's moments to its
// opening (or its parent frame's), everything else to session.started.
func (k *Keeper) parentFor(m Moment) *string {
	ref := func(ids ...string) *string {
		for _, id := range ids {
			if id != "" {
				return &id
			}
		}
		return nil
	}
	switch m.Event {
	case contract.EventSessionStarting:
		return ref(k.startedReceipt)
	case contract.EventSessionStarted:
		return ref(k.startingReceipt, k.startedReceipt)
	case contract.EventSessionEnded:
		return ref(k.endingReceipt, k.startedReceipt, k.startingReceipt)
	}
	if m.Frame != nil {
		if id, ok := k.frameReceipts[m.Frame.FrameID]; ok {
			return &id
		}
		if m.Frame.ParentFrameID != nil {
			if id, ok := k.frameReceipts[*m.Frame.ParentFrameID]; ok {
				return &id
			}
		}
	}
	return ref(k.startedReceipt, k.startingReceipt)
}

// summaryN reads a switch number recorded in memory (int) or read back
// from a ledger (float64).
func summaryN(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

func cloneSummary(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
