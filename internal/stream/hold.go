package stream

import (
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// What the keeper holds back, and why.
//
// Native wins: when the hook bridge and the transcript report the same
// frame moment, the hook's receipt is the one recorded and the
// transcript's provenance is attached to it. A transcript moment the
// bridge also reports therefore waits for it: NativeWindow, longer while
// the bridge called less than BridgeQuiet ago, NativeWaitMax at most
// (HookArrived); moments behind
// it wait too, so receipts keep the transcript's order. A hook that never
// comes releases the transcript moment when the window ends; a hook that
// comes after the transcript moment was recorded is a duplicate and is
// dropped (the ledger is append-only). An identified compaction (keyed)
// is the same: the transcript's waits (up to CompactionWindow) for the
// hook's, and the hook's waits (up to NativeWindow, while a transcript is
// read) for the transcript's, whose figures the hook's receipt takes.
//
// The held session.started: a harness session's session.started is
// recorded at once when nothing will name the session, else held until
// the session-start hook or the transcript names it, or the bind wait
// passes.
//
// The held session.ending: a session-end hook can arrive before the
// transcript's last turn has been read (a one-shot in a fresh home,
// whose transcript folder the watcher found late). Nothing of a harness
// session's frames may follow its session.ending, so while a transcript
// is read the hook's session.ending waits until the caller has read the
// transcript to its end (ReadToEnd: the drain after the harness exited),
// EndReadWait at most; what the transcript reports meanwhile goes ahead
// of it, the wrapper's own moments (ticks) behind it.

// release is a moment the keeper released: recorded next, in order,
// through admit (which may drop it or add inferred stages).
//
// The offer methods return the moment when it is ready at once (ok false
// when it was queued or absorbed); what waits in the queue comes out of
// pop (or flush), so after an offer what it returned is recorded first
// and then what is due.
type release struct {
	Moment Moment
}

// heldMoment is a moment the keeper removed from its queue for a hook's
// receipt to absorb (take).
type heldMoment struct {
	Moment Moment
	// Started says it is the held session.started.
	Started bool
}

// held is a moment waiting to be recorded; until is zero for a moment
// that only waits for those ahead of it.
type held struct {
	key   string
	m     Moment
	until time.Time
	// waitHook keeps a held session.started for the session-start hook
	// even when the transcript names the session first.
	waitHook bool
	// fromHook marks a hook's moment (which a transcript moment never
	// replaces).
	fromHook bool
	// limit is the latest until of a transcript moment that waits for a
	// hook's report of it: HookArrived moves until no further.
	limit time.Time
	// waitsRead marks a hook's session.ending that waits for the
	// transcript to be read to its end (ReadToEnd).
	waitsRead bool
}

// EndReadWait bounds how long a session-end hook's session.ending waits
// for the transcript to be read to its end: a harness that reports its
// session's end and keeps running holds its later moments no longer.
const EndReadWait = 30 * time.Second

// keyStarted is the queue key of a held session.started.
const keyStarted = "session.started"

// queueKey is the key a later report of the same moment finds m by.
func queueKey(m Moment) string {
	if m.Event == contract.EventSessionStarted && m.Frame == nil {
		return keyStarted
	}
	if keyed(m) {
		return string(m.Event) + "\x00" + m.EventID
	}
	if m.Frame == nil {
		return ""
	}
	return string(m.Event) + "\x00" + m.Frame.FrameID
}

// absorb is hook moment h, which also reports transcript moment t: the
// transcript's summary rides along (telemetry_summary.transcript), and an
// identified compaction takes the transcript's figures it lacks.
func absorb(h, t Moment) Moment {
	h.Summary = cloneSummary(h.Summary)
	if keyed(h) {
		for key, v := range t.Summary {
			switch key {
			case "source", "path", "line", "offset":
			default:
				if _, ok := h.Summary[key]; !ok {
					h.Summary[key] = v
				}
			}
		}
	}
	h.Summary["transcript"] = t.Summary
	return h
}

// Waiting reports whether moments wait in the queue.
func (k *Keeper) Waiting() bool { return len(k.queue) > 0 }

// Next returns when the keeper next needs Release: the head's deadline
// (at once when it only waits for nothing); ok is false when nothing
// waits.
func (k *Keeper) Next() (at time.Time, ok bool) {
	if len(k.queue) == 0 {
		return time.Time{}, false
	}
	return k.queue[0].until, true
}

// offer is a moment of the wrapper's own (a tick, a degradation, a
// renewal step): recorded now unless moments wait, then behind them.
func (k *Keeper) offer(m Moment) (r release, ok bool) {
	if len(k.queue) > 0 {
		k.queue = append(k.queue, held{m: m})
		return release{}, false
	}
	return release{Moment: m}, true
}

// offerStarted offers a harness session's session.started: ready now when
// nothing will name the session, else held until the harness names it or
// the bind wait passes. payloadsWaitHook says payloads wait for the
// session-start hook to place them: only that hook's receipt may carry
// them, so the wait is longer and a transcript naming the session does
// not end it.
func (k *Keeper) offerStarted(m Moment, now time.Time, payloadsWaitHook bool) (r release, ok bool) {
	if !k.expectsBinding() && !payloadsWaitHook {
		if len(k.queue) > 0 {
			k.queue = append(k.queue, held{key: keyStarted, m: m})
			return release{}, false
		}
		return release{Moment: m}, true
	}
	wait := k.cfg.BindWait
	if payloadsWaitHook {
		wait *= HookBindFactor
	}
	k.queue = append(k.queue, held{key: keyStarted, m: m, until: now.Add(wait), waitHook: payloadsWaitHook})
	return release{}, false
}

// expectsBinding reports whether the harness will name its session: the
// transcript of a new harness session, or a hook that reports
// session.started. A pinned launch knows the id but still waits for the
// evidence that the harness took it; a resumed one is named by its hook
// only (its transcript goes on).
func (k *Keeper) expectsBinding() bool {
	return (k.cfg.Transcript && !k.resumed) || k.cfg.HookNamesSession
}

// offerTranscript offers a transcript moment: ready now, or queued when a
// hook may still report it or moments ahead of it wait. A transcript
// binding completes a held session.started; a transcript moment a hook
// already reported corroborates the hook's receipt. The caller has bound
// m's harness session id (Bind) before.
func (k *Keeper) offerTranscript(m Moment, now time.Time, transcriptOpen bool) (r release, ok bool) {
	if len(k.queue) == 0 && ((m.Frame == nil && !keyed(m)) || !k.cfg.Bridged[m.Event]) {
		// Nothing waits and no hook reports it: the common case, decided
		// without building the moment's queue key.
		if k.has(m) {
			return release{}, false
		}
		return release{Moment: m}, true
	}
	key := queueKey(m)
	if key == keyStarted {
		if i := k.queued(keyStarted); i >= 0 {
			q := &k.queue[i]
			q.m = mergeStarted(q.m, m)
			if !q.waitHook {
				q.until = time.Time{}
			}
			return release{}, false
		}
	}
	if k.has(m) {
		return release{}, false // another source reported it first
	}
	if i := k.queued(key); key != "" && key != keyStarted && i >= 0 && k.queue[i].fromHook {
		k.queue[i].m = absorb(k.queue[i].m, m) // the hook's receipt, waiting, absorbs it
		if keyed(m) {
			k.queue[i].until = time.Time{} // it waited for this report only
		}
		return release{}, false
	}
	q := held{key: key, m: m}
	if key != "" && key != keyStarted && k.cfg.Bridged[m.Event] {
		wait := NativeWindow
		if keyed(m) {
			wait = CompactionWindow
		}
		q.limit = now.Add(max(wait, NativeWaitMax))
		q.until = k.hookWait(now.Add(wait), q.limit) // native wins: wait for the hook's report
	} else if len(k.queue) == 0 {
		return release{Moment: m}, true
	}
	k.insert(q)
	k.settle(m, transcriptOpen)
	return release{}, false
}

// offerHook orders a hook moment that places nothing with the moments
// that wait: it takes the place of the transcript's report of the same
// moment, and a frame stage whose earlier stages only the transcript
// reports waits (up to NativeWindow) for them, so the frame's receipts
// keep their causal order. transcriptOpen says a transcript is still
// being read.
func (k *Keeper) offerHook(m Moment, now time.Time, transcriptOpen bool) (r release, ok bool) {
	key := queueKey(m)
	if i := k.queued(key); key != "" && key != keyStarted && i >= 0 {
		q := &k.queue[i]
		q.m, q.until, q.fromHook = absorb(m, q.m), time.Time{}, true // native wins; the transcript corroborates
		return release{}, false
	}
	if k.has(m) {
		return release{}, false
	}
	q := held{key: key, m: m, fromHook: true}
	switch {
	case k.endingWaitsRead(m, transcriptOpen):
		q.until, q.waitsRead = now.Add(EndReadWait), true
	case keyed(m) && transcriptOpen && k.cfg.Bridged[m.Event]:
		q.until = now.Add(NativeWindow) // the transcript's report carries the figures
	case k.missingEarlier(m, len(k.queue), transcriptOpen):
		q.until = now.Add(NativeWindow)
	case len(k.queue) == 0:
		return release{Moment: m}, true
	}
	k.insert(q)
	return release{}, false
}

// endingWaitsRead reports whether hook moment m is a session.ending that
// waits for the transcript to be read to its end: a transcript is read
// and the current harness session has not told its end yet.
func (k *Keeper) endingWaitsRead(m Moment, transcriptOpen bool) bool {
	return m.Event == contract.EventSessionEnding && k.cfg.Transcript && transcriptOpen && !k.ending && !k.ended
}

// readToEnd is called once the transcript has been read to its end (the
// harness exited and the drain caught up): a session.ending that waited
// for it is due.
func (k *Keeper) readToEnd() {
	for i := range k.queue {
		if k.queue[i].waitsRead {
			k.queue[i].until, k.queue[i].waitsRead = time.Time{}, false
		}
	}
}

// readWaiter returns the index of the session.ending that waits for the
// transcript's read, or -1.
func (k *Keeper) readWaiter() int {
	return slices.IndexFunc(k.queue, func(q held) bool { return q.waitsRead })
}

// hookArrived is called when a hook call reaches the wrapper, before its
// moments are offered. A bridge reports in the harness's order, one call
// after the other, and one that runs inside the harness (a plugin) sends
// its next report only when the harness's event loop gets to it: on a
// loaded machine its reports arrive seconds behind the transcript's
// (seen: a harness's event loop busy 5.5 s at its first prompt, a -race
// test beside three busy loops on 2 cores), each one late by the delays
// of all before it. So a transcript moment waits for the hook's report at
// least until the bridge has been quiet for BridgeQuiet, and at most
// NativeWaitMax after it was offered.
func (k *Keeper) hookArrived(now time.Time) {
	k.lastHook = now
	for i := range k.queue {
		if q := &k.queue[i]; !q.fromHook && !q.limit.IsZero() && !q.until.IsZero() {
			q.until = k.hookWait(q.until, q.limit)
		}
	}
}

// hookWait is how long a transcript moment waits for a hook's report:
// until, or longer while the bridge's last call is recent, never past
// limit.
func (k *Keeper) hookWait(until, limit time.Time) time.Time {
	if !k.lastHook.IsZero() {
		if q := k.lastHook.Add(BridgeQuiet); q.After(until) {
			until = q
		}
	}
	if until.After(limit) {
		return limit
	}
	return until
}

// insert queues q before the first waiting moment of the same frame at a
// later stage (so a late earlier stage still comes first), else before a
// session.ending that waits for the transcript's read (what the
// transcript or a frame reports happened before the session's end), else
// last.
func (k *Keeper) insert(q held) {
	pos := len(k.queue)
	if i := k.readWaiter(); i >= 0 && (!q.fromHook || q.m.Frame != nil) {
		pos = i
	}
	if s := frameStage(q.m.Event); s > 0 && q.m.Frame != nil {
		for i, e := range k.queue {
			if e.m.Frame != nil && e.m.Frame.FrameID == q.m.Frame.FrameID && frameStage(e.m.Event) > s {
				pos = i
				break
			}
		}
	}
	k.queue = slices.Insert(k.queue, pos, q)
}

// missingEarlier reports whether frame moment m still lacks an earlier
// stage the transcript will report: declared by the manifest, neither
// admitted nor among the first upTo queued moments, with a transcript
// being read.
func (k *Keeper) missingEarlier(m Moment, upTo int, transcriptOpen bool) bool {
	s := frameStage(m.Event)
	if s <= 1 || m.Frame == nil || !transcriptOpen {
		return false
	}
	id := m.Frame.FrameID
	for j := k.frames[id] + 1; j < s; j++ {
		if !k.declared[frameStages[j-1]] {
			continue
		}
		if !slices.ContainsFunc(k.queue[:upTo], func(e held) bool {
			return e.m.Frame != nil && e.m.Frame.FrameID == id && frameStage(e.m.Event) == j
		}) {
			return true
		}
	}
	return false
}

// settle releases the hook moments of m's frame that waited for the
// earlier stages now queued ahead of them.
func (k *Keeper) settle(m Moment, transcriptOpen bool) {
	if m.Frame == nil {
		return
	}
	for i := range k.queue {
		e := &k.queue[i]
		if e.fromHook && !e.until.IsZero() && e.m.Frame != nil && e.m.Frame.FrameID == m.Frame.FrameID && !k.missingEarlier(e.m, i, transcriptOpen) {
			e.until = time.Time{}
		}
	}
}

// queued returns the index of the queued moment with key, or -1.
func (k *Keeper) queued(key string) int {
	for i, q := range k.queue {
		if q.key == key {
			return i
		}
	}
	return -1
}

// pop removes and returns the head of the queue when its wait is over at
// now.
func (k *Keeper) pop(now time.Time) (release, bool) {
	if len(k.queue) == 0 || k.queue[0].until.After(now) {
		return release{}, false
	}
	q := k.queue[0]
	k.queue = k.queue[1:]
	return release{Moment: q.m}, true
}

// popAny removes and returns the head of the queue, due or not (nothing
// more can come: the harness has exited, or a renewal step comes after
// everything observed before it).
func (k *Keeper) popAny() (release, bool) {
	if len(k.queue) == 0 {
		return release{}, false
	}
	q := k.queue[0]
	k.queue = k.queue[1:]
	return release{Moment: q.m}, true
}

// release returns the queued moments whose wait is over at now, in order.
func (k *Keeper) release(now time.Time) []release {
	var out []release
	for r, ok := k.pop(now); ok; r, ok = k.pop(now) {
		out = append(out, r)
	}
	return out
}

// flush returns every queued moment, in order.
func (k *Keeper) flush() []release {
	var out []release
	for r, ok := k.popAny(); ok; r, ok = k.popAny() {
		out = append(out, r)
	}
	return out
}

// take is called for a hook moment that may place payloads: when another
// source's report of it waits in the queue, it is removed and returned,
// for the hook's receipt to absorb, with the moments ahead of it, ready to
// record first.
func (k *Keeper) take(m Moment) (ahead []release, q heldMoment, ok bool) {
	key := queueKey(m)
	if key == "" {
		return nil, heldMoment{}, false
	}
	i := k.queued(key)
	if i < 0 {
		if w := k.readWaiter(); key == keyStarted && w >= 0 {
			// A new harness session starts in the same process (a
			// switch): the old one's end comes first.
			for _, a := range k.queue[:w+1] {
				ahead = append(ahead, release{Moment: a.m})
			}
			k.queue = slices.Delete(k.queue, 0, w+1)
		}
		return ahead, heldMoment{}, false
	}
	for _, a := range k.queue[:i] {
		ahead = append(ahead, release{Moment: a.m})
	}
	h := k.queue[i]
	k.queue = slices.Delete(k.queue, 0, i+1)
	return ahead, heldMoment{Moment: h.m, Started: h.key == keyStarted}, true
}

// releaseStarted releases a held session.started and what waits ahead of
// it: moment by reports something later, so the session has started (and
// by's harness session id, if any, names it).
func (k *Keeper) releaseStarted(by Moment) []release {
	i := k.queued(keyStarted)
	if i < 0 {
		return nil
	}
	if by.Event == contract.EventSessionEnding && k.cfg.Transcript && !k.ending && !k.ended {
		// A session-end hook's session.ending waits for the transcript,
		// whose first line names the session: session.started keeps
		// waiting for it too.
		return nil
	}
	if by.HarnessSessionID != "" && k.queue[i].m.HarnessSessionID == "" {
		k.queue[i].m = mergeStarted(k.queue[i].m, Moment{HarnessSessionID: by.HarnessSessionID})
	}
	out := make([]release, 0, i+1)
	for _, a := range k.queue[:i+1] {
		out = append(out, release{Moment: a.m})
	}
	k.queue = slices.Delete(k.queue, 0, i+1)
	return out
}

// mergeStarted is the held session.started completed by the evidence
// that named the session: the evidence's id and provenance, the held
// moment's own facts (pid, renewal step, payload receipts).
func mergeStarted(heldM, evidence Moment) Moment {
	out := heldM
	if evidence.HarnessSessionID == "" {
		evidence.HarnessSessionID = heldM.HarnessSessionID
	}
	out.HarnessSessionID = evidence.HarnessSessionID
	if evidence.EventID != "" {
		out.EventID = evidence.EventID
	}
	sum := cloneSummary(evidence.Summary)
	for k, v := range heldM.Summary {
		sum[k] = v
	}
	if out.HarnessSessionID != "" {
		sum["binding"] = "harness_session_id"
	}
	out.Summary = sum
	out.Payloads = append(out.Payloads, evidence.Payloads...)
	out.Warnings = append(out.Warnings, evidence.Warnings...)
	return out
}

// Hold is one moment the keeper holds back: its event, why, and until
// when (zero: only behind the moments ahead of it).
type Hold struct {
	Event  contract.Event
	Reason string
	Until  time.Time
}

// Holds says what the keeper holds back and why, in order.
func (k *Keeper) Holds() []Hold {
	out := make([]Hold, 0, len(k.queue))
	for i, q := range k.queue {
		h := Hold{Event: q.m.Event, Until: q.until}
		switch {
		case q.key == keyStarted && q.waitHook:
			h.Reason = "waiting for the session-start hook that places the session's payloads"
		case q.key == keyStarted && k.launches > 1:
			h.Reason = "waiting for the relaunched harness to name its session"
		case q.key == keyStarted:
			h.Reason = "waiting for the harness to name its session"
		case q.waitsRead:
			h.Reason = "waiting for the transcript to be read to its end"
		case q.until.IsZero() && i > 0:
			h.Reason = "behind the moments held before it"
		case q.fromHook && keyed(q.m):
			h.Reason = "waiting for the transcript's report of the same moment"
		case q.fromHook:
			h.Reason = "waiting for the transcript's earlier stages of its frame"
		default:
			h.Reason = "waiting for the hook's report of the same moment"
		}
		out = append(out, h)
	}
	return out
}
