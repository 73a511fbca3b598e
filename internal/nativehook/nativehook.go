// Package nativehook records native hook calls that no `lifeloop run`
// wrapper owns (integration mode native_hook): each harness session gets
// a lifeloop session of its own, found by its harness session id or
// created on first sight, whose state follows the session hooks. Calls
// that fail are recorded as failed receipts where a session can be found.
//
// Everything here is best effort: the harness waits on the hook, so
// errors are dropped rather than reported.
package nativehook

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/stream"
)

// Recorder records hook calls under one state root.
type Recorder struct {
	// Root is the resolved state root.
	Root string
	// Adapter is the harness whose hook was called (see AdapterFor).
	Adapter *adapters.Adapter
	// Durability is the ledger's SyncMode.
	Durability ledger.SyncMode
	Now        func() time.Time
	IDs        ids.Source
}

// AdapterFor returns the registry's adapter for id when it has hooks,
// else the generic adapter.
func AdapterFor(reg *adapters.Registry, id string) *adapters.Adapter {
	if a, err := reg.Lookup(id); err == nil && a.Hooks() != nil {
		return a
	}
	a, _ := reg.Lookup(adapters.GenericID)
	return a
}

// Failure is a hook call that could not be served: its class and what
// went wrong.
type Failure struct {
	Class   contract.FailureClass
	Message string
	// Hook and Adapter are as the harness named them.
	Hook, Adapter string
}

// RecordFailure records a failed receipt for the call in session id; id
// "" picks the native session of mapped's harness session (created when
// missing), else native-unattributed-<adapter>. A named session must
// exist.
func (r Recorder) RecordFailure(id string, mapped hooks.Mapped, fail Failure) {
	if r.Adapter == nil {
		return
	}
	unlock := lockSessions(r.Root)
	defer unlock()
	a := r.Adapter
	var rec statedir.SessionRecord
	var exists bool
	switch {
	case id != "":
		var err error
		if rec, err = statedir.ReadSession(r.Root, id); err != nil {
			return // only an existing session is written to
		}
		exists = true
	case mapped.HarnessSessionID != "":
		rec, exists = findHarnessSession(r.Root, a.ID, mapped.HarnessSessionID)
		if !exists {
			id = r.IDs.New(ids.PrefixSession)
		}
	default:
		id = "native-unattributed-" + a.ID
		var err error
		rec, err = statedir.ReadSession(r.Root, id)
		exists = err == nil
	}
	if !exists {
		now := r.Now()
		rec = statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: a.ID,
			IntegrationMode: string(contract.ModeNativeHook), Cwd: mapped.Cwd, StartedAt: &now, UpdatedAt: now}
		if mapped.HarnessSessionID != "" {
			rec.HarnessSessionIDs = []string{mapped.HarnessSessionID}
		}
		if err := statedir.WriteSession(r.Root, rec); err != nil {
			return
		}
	}
	ev := contract.EventCapabilityDegraded
	var frame *contract.FrameContext
	if len(mapped.Moments) > 0 {
		ev, frame = mapped.Moments[0].Event, mapped.Moments[0].Frame
	}
	m := moment.Moment{
		Event: ev, Frame: frame, HarnessSessionID: mapped.HarnessSessionID,
		Failure:  &fail.Class,
		Summary:  map[string]any{"hook": fail.Hook, "adapter": fail.Adapter},
		Warnings: []contract.Warning{{Code: stream.HookFailedWarning, Message: truncate(fail.Message, 300)}},
	}
	if ev == contract.EventCapabilityDegraded {
		m.Degradations = []contract.CapabilityDegradation{{Capability: "native_hook", PreviousSupport: contract.SupportNative,
			CurrentSupport: contract.SupportUnavailable, ObservedAtEpochS: contract.Ptr(r.Now().Unix()),
			Evidence: contract.Ptr(truncate(fail.Message, 300)), RetryClass: contract.Ptr(fail.Class.DefaultRetry())}}
	}
	// A failed call is no moment of the story (stream.HookFailedWarning):
	// recorded as it is, outside the driver.
	p, err := r.open(rec)
	if err != nil {
		return
	}
	defer p.Close()
	_, _ = p.Route(context.Background(), m)
}

// Record records mapped's moments in the native session of its harness
// session, creating it on first sight: session.started marks it running.
// The harness's own session-end hook (session.ending) is the session's
// end — no wrapper will report one — so it is followed by the session's
// one session.ended, completed (contract.ReportedEndSummary), and the
// session is completed. Nothing is recorded after that end: a repeated
// end hook adds nothing, and a later start of the same harness session
// (a resume) opens a new lifeloop session, its own incarnation.
func (r Recorder) Record(mapped hooks.Mapped) {
	if r.Adapter == nil {
		return
	}
	unlock := lockSessions(r.Root)
	defer unlock()
	a := r.Adapter
	now := r.Now()
	rec, exists := findHarnessSession(r.Root, a.ID, mapped.HarnessSessionID)
	var prior []contract.LifecycleReceipt
	if exists {
		prior = ledgerReceipts(r.Root, rec.ID)
		if ended(prior) {
			if !opens(mapped) {
				return // a session ends once
			}
			exists = false
		}
	}
	if !exists {
		rec = statedir.SessionRecord{ID: r.IDs.New(ids.PrefixSession), State: statedir.StateRunning, AdapterID: a.ID,
			IntegrationMode: string(contract.ModeNativeHook), Cwd: mapped.Cwd,
			HarnessSessionIDs: []string{mapped.HarnessSessionID}, StartedAt: &now}
		prior = nil
	}
	startedAt := rec.StartedAt
	for _, m := range mapped.Moments {
		switch m.Event {
		case contract.EventSessionStarted:
			rec.State, rec.EndedAt = statedir.StateRunning, nil
		case contract.EventSessionEnding:
			rec.State, rec.EndedAt = statedir.StateCompleted, &now
		}
	}
	rec.UpdatedAt = now
	if err := statedir.WriteSession(r.Root, rec); err != nil {
		return
	}
	p, err := r.open(rec)
	if err != nil {
		return
	}
	defer p.Close()
	// One coherent stream, as a wrapper keeps it, through the same
	// driver: taken up from the ledger, a moment it already tells
	// (another hook reported it) is dropped, and each receipt chains to
	// its parent (a frame's to its frame.opening, the rest to
	// session.started).
	d := stream.NewDriver(stream.Config{Manifest: a.Manifest(), Mode: contract.ModeNativeHook, Known: rec.HarnessSessionIDs, Prior: prior},
		func(m moment.Moment, _ bool) (contract.LifecycleReceipt, string, error) {
			// Recording must finish even when the call's bound has
			// passed: the moment happened.
			res, err := p.Route(context.Background(), m)
			return res.Receipt, res.Receipt.ReceiptID, err
		}, stream.Callbacks{})
	for _, m := range mapped.Moments {
		d.Step(stream.Fact{Kind: stream.Direct, Now: now, Moment: moment.Moment{Event: m.Event, EventID: m.EventID, Frame: m.Frame,
			HarnessSessionID: mapped.HarnessSessionID, Summary: m.Summary}})
		if m.Event == contract.EventSessionEnding {
			d.Step(stream.Fact{Kind: stream.Direct, Now: now, Moment: reportedEnd(startedAt, rec.Cwd, mapped.HarnessSessionID, m, now)})
		}
	}
}

// reportedEnd is the session.ended that follows the harness's own
// session-end hook (ending): completed, with the hook's reason as the
// harness's.
func reportedEnd(startedAt *time.Time, cwd, hsid string, ending hooks.MappedMoment, now time.Time) moment.Moment {
	var started time.Time
	if startedAt != nil {
		started = *startedAt
	}
	why, _ := ending.Summary["reason"].(string)
	sum := contract.ReportedEndSummary(why, started, now, cwd)
	if hook, ok := ending.Summary["hook"]; ok {
		sum["hook"] = hook
	}
	return moment.Moment{Event: contract.EventSessionEnded, HarnessSessionID: hsid,
		EventID: hsid + "/" + string(contract.EventSessionEnded), Summary: sum}
}

// ended reports whether a native session's receipts tell its end.
func ended(prior []contract.LifecycleReceipt) bool {
	return slices.ContainsFunc(prior, func(r contract.LifecycleReceipt) bool {
		return r.Event == contract.EventSessionEnded && r.Status != contract.StatusFailed
	})
}

// opens reports whether mapped starts its harness session (again).
func opens(mapped hooks.Mapped) bool {
	return slices.ContainsFunc(mapped.Moments, func(m hooks.MappedMoment) bool { return m.Event == contract.EventSessionStarted })
}

// open opens the pipeline of rec's session.
func (r Recorder) open(rec statedir.SessionRecord) (*pipeline.Pipeline, error) {
	return pipeline.Open(pipeline.Options{
		StateDir: r.Root, Session: rec.ID, Adapter: r.Adapter, Mode: contract.ModeNativeHook, Durability: r.Durability, Now: r.Now, IDs: r.IDs,
	})
}

// ledgerReceipts reads session id's receipts (none when it has no ledger
// yet).
func ledgerReceipts(root, id string) []contract.LifecycleReceipt {
	var out []contract.LifecycleReceipt
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err == nil {
			out = append(out, e.Receipt)
		}
	}
	return out
}

// findHarnessSession returns the newest session of adapterID whose harness
// session ids contain hsid.
func findHarnessSession(root, adapterID, hsid string) (statedir.SessionRecord, bool) {
	recs, err := statedir.ListSessions(root)
	if err != nil {
		return statedir.SessionRecord{}, false
	}
	for _, r := range recs {
		if r.AdapterID == adapterID && slices.Contains(r.HarnessSessionIDs, hsid) {
			return r, true
		}
	}
	return statedir.SessionRecord{}, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// lockFile serialises find-or-create of native_hook sessions between
// concurrent host-hook processes (a hook program may run detached and race
// the next hook).
const lockFile = ".native-hook.lock"

// lockSessions takes an exclusive flock on <root>/sessions/.native-hook.lock
// and returns its release; on any error it returns a no-op release and the
// caller proceeds unserialised.
func lockSessions(root string) func() {
	dir := statedir.SessionsDir(root)
	if err := statedir.Ensure(dir); err != nil {
		return func() {}
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_CREATE|os.O_RDWR, statedir.FilePerm)
	if err != nil {
		return func() {}
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return func() {}
	}
	return func() { _ = f.Close() }
}
