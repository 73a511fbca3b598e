package renewal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/contract"
)

// crash is the panic value that simulates the wrapper dying at a step.
type crash string

// world is what outlives one Orchestrator: the files, the ledger the
// records went to, and the harness processes started.
type world struct {
	dir     string
	clock   *fakeClock
	ledger  []recorded
	starts  [][]string // argv of every start (ActStart) that took effect
	stops   int
	running bool
	// crashAt names the point where the next call panics (see hit).
	crashAt string
	// stopErr and startErr make the next Stop / Start fail.
	stopErr, startErr error
}

type recorded struct {
	ev       contract.Event
	summary  map[string]any
	receipts []contract.PayloadReceipt
}

// hit panics when point is the crash point (once).
func (w *world) hit(point string) {
	if w.crashAt == point {
		w.crashAt = ""
		panic(crash(point))
	}
}

// fakeProcess does a renewal's stops and starts for one wrapper; it
// shares the world.
type fakeProcess struct{ w *world }

func (p fakeProcess) Stop(_ context.Context, _ syscall.Signal, _ time.Duration) (contract.ExitFacts, error) {
	p.w.hit("before stop")
	if err := p.w.stopErr; err != nil {
		p.w.stopErr = nil
		return contract.ExitFacts{}, err
	}
	if p.w.running {
		p.w.running = false
		p.w.stops++
	}
	p.w.hit("after stop")
	return contract.ExitFacts{Code: 0, FromWaitStatus: true}, nil
}

func (p fakeProcess) Start(_ context.Context, argv []string) error {
	p.w.hit("before start")
	if err := p.w.startErr; err != nil {
		p.w.startErr = nil
		return err
	}
	p.w.starts = append(p.w.starts, slices.Clone(argv))
	p.w.running = true
	p.w.hit("after start")
	return nil
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return &world{dir: t.TempDir(), clock: newClock(), running: true}
}

// orchestrator builds a new Orchestrator over the world's files, as a
// new wrapper would.
func (w *world) orchestrator(t *testing.T, adapterID string, argv ...string) *driven {
	t.Helper()
	a, err := builtin.Default().Lookup(adapterID)
	if err != nil {
		t.Fatal(err)
	}
	return &driven{Orchestrator: &Orchestrator{
		Adapter:    a,
		Argv:       argv,
		Store:      &Store{Dir: filepath.Join(w.dir, "continuation"), Now: w.clock.Now},
		StatusPath: StatusPath(w.dir),
		Now:        w.clock.Now,
	}, w: w, HarnessSessionID: func() string { return "11111111-2222-3333-4444-555555555555" }}
}

// driven is an Orchestrator whose renewals the world drives to their end,
// doing each action they ask for as a wrapper would.
type driven struct {
	*Orchestrator
	w *world
	// HarnessSessionID is the current harness session id (nil: "").
	HarnessSessionID func() string
}

func (d *driven) hid() string {
	if d.HarnessSessionID == nil {
		return ""
	}
	return d.HarnessSessionID()
}

func (d *driven) Renew(ctx context.Context, req Request) (Outcome, error) {
	return d.w.drive(ctx, d.Adapter, d.Orchestrator.Renew(req, d.hid()))
}

func (d *driven) Recover(ctx context.Context) (Outcome, error) {
	return d.w.drive(ctx, d.Adapter, d.Orchestrator.Recover(d.hid()))
}

// drive does the actions of s until it ends. A crash (a panic at a hit
// point) leaves s where it was, as a killed wrapper leaves its renewal.
// A start is planned as the launcher plans it: PrepareLaunch, then the
// payloads placed.
func (w *world) drive(ctx context.Context, ad *adapters.Adapter, s *Steps) (Outcome, error) {
	var ans Answer
	for {
		act, ok := s.Next(ans)
		if !ok {
			return s.Result()
		}
		ans = Answer{}
		switch act.Kind {
		case ActRecord:
			w.hit("before record " + string(act.Event))
			w.ledger = append(w.ledger, recorded{act.Event, act.Summary, slices.Clone(act.PayloadReceipts)})
			w.hit("after record " + string(act.Event))
			ans.ReceiptID = fmt.Sprintf("lfr_%d", len(w.ledger))
		case ActStop:
			ans.Exit, ans.Err = fakeProcess{w}.Stop(ctx, act.Signal, act.Grace)
		case ActStart:
			pl, err := ad.PlaceLaunchPayloads(ad.PrepareLaunch(act.Argv), act.Launch, act.Payloads)
			if err != nil || len(pl.Rest) > 0 {
				panic(fmt.Sprintf("the launch plan cannot place what the renewal asked: %v, %d left", err, len(pl.Rest)))
			}
			ans.Err = fakeProcess{w}.Start(ctx, pl.Argv)
		}
	}
}

// deduped is the ledger with repeated renewal steps (same attempt and
// step, recorded again after a crash) removed, as a consumer keyed on
// them sees it.
func (w *world) deduped() []recorded {
	seen := map[string]bool{}
	var out []recorded
	for _, r := range w.ledger {
		k := fmt.Sprint(r.summary["renewal_attempt"], "/", r.summary["renewal_step"])
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, r)
	}
	return out
}

func events(rs []recorded) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r.ev))
	}
	return out
}

// runUntilCrash runs f and reports whether it panicked with a crash.
func runUntilCrash(t *testing.T, f func()) (crashed bool) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	f()
	return false
}

func readAllFiles(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			data, _ := os.ReadFile(path)
			b.WriteString(path + "\n" + string(data) + "\n")
		}
		return nil
	})
	return b.String()
}

func TestRenewDelivers(t *testing.T) {
	const secret = "continue at step 3 \"quoted\"\nSECRET-7731"
	tests := []struct {
		name       string
		adapter    string
		argv       []string
		resume     bool
		wantArgv   []string
		wantTarget contract.ManifestPlacementClass
	}{
		{"claude resume", "claude", []string{"claude", "--model", "m"}, true,
			[]string{"claude", "--append-system-prompt", "", "--resume", "11111111-2222-3333-4444-555555555555", "--model", "m"}, contract.ManifestPreSession},
		{"claude fresh", "claude", []string{"claude"}, false, []string{"claude", "--append-system-prompt", ""}, contract.ManifestPreSession},
		// PrepareLaunch first, then the placement: the first launch's order.
		{"codex fresh", "codex", []string{"codex"}, false, []string{"codex", "-c", "", "--no-daemon"}, contract.ManifestPreSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			o := w.orchestrator(t, tt.adapter, tt.argv...)
			out, err := o.Renew(t.Context(), Request{Resume: tt.resume, Reason: "context full",
				Payloads: []contract.PayloadEnvelope{payload("pay_1", secret), payload("pay_r", "r", contract.PlacementReceiptOnly)}})
			if err != nil {
				t.Fatal(err)
			}
			if out.State != StateDelivered || !out.Started || out.Attempt != 1 || out.Placement != tt.wantTarget {
				t.Errorf("outcome %+v", out)
			}
			if got := events(w.ledger); strings.Join(got, " ") != "session.ending session.ended session.starting session.started" {
				t.Errorf("recorded %v", got)
			}
			for _, r := range w.ledger {
				if r.summary["reason"] != "renewal" {
					t.Errorf("%s summary %v", r.ev, r.summary)
				}
			}
			if w.stops != 1 || len(w.starts) != 1 {
				t.Fatalf("stops %d starts %d", w.stops, len(w.starts))
			}
			argv := w.starts[0]
			if len(argv) != len(tt.wantArgv) {
				t.Fatalf("started %q, want shape %q", argv, tt.wantArgv)
			}
			text, _ := contract.RenderTransport([]contract.PayloadEnvelope{payload("pay_1", secret)})
			for i, want := range tt.wantArgv {
				switch {
				case want == "" && tt.adapter == "claude":
					if argv[i] != string(text) {
						t.Errorf("argv[%d] = %q, want the transport envelope of pay_1 only", i, argv[i])
					}
				case want == "":
					if argv[i] != "developer_instructions="+codex.TOMLString(string(text)) {
						t.Errorf("argv[%d] = %q", i, argv[i])
					}
				case argv[i] != want:
					t.Errorf("argv[%d] = %q, want %q", i, argv[i], want)
				}
			}
			started := w.ledger[3]
			if len(started.receipts) != 2 {
				t.Fatalf("payload receipts %+v", started.receipts)
			}
			for _, r := range started.receipts {
				if r.Status != contract.PlacementOutcomeDelivered {
					t.Errorf("receipt %+v", r)
				}
			}
			if started.receipts[0].Placement != contract.PlacementDeveloperEquivalentFrame || started.receipts[1].Placement != contract.PlacementReceiptOnly {
				t.Errorf("placements %+v", started.receipts)
			}
			if pending, _ := o.Store.Pending(); len(pending) != 0 {
				t.Errorf("delivered payloads still stored: %v", ids(pending))
			}
			st, err := ReadStatus(o.StatusPath)
			if err != nil || st.State != StateDelivered || st.PayloadPending || st.Reason != "context full" || st.FinishedAt == nil {
				t.Errorf("status %+v, %v", st, err)
			}
			if files := readAllFiles(t, w.dir); strings.Contains(files, "SECRET-7731") {
				t.Error("a payload body outlived its delivery on disk")
			}
			for _, r := range w.ledger {
				if strings.Contains(fmt.Sprint(r.summary), "SECRET") {
					t.Error("a summary carries the payload body")
				}
			}
		})
	}
}

func TestRenewRefusesBeforeTouchingTheHarness(t *testing.T) {
	past := newClock().t.Add(-time.Minute).Unix()
	expired := payload("pay_old", "x")
	expired.ExpiresAtEpochS = &past
	tests := []struct {
		name       string
		adapter    string
		argv       []string
		noID       bool
		negotiated *contract.RenewalSupport
		req        Request
		want       contract.FailureClass
	}{
		{"generic command", "generic", []string{"bash"}, false, nil, Request{}, contract.FailureCapabilityUnsupported},
		{"not a session", "claude", []string{"claude", "mcp", "list"}, false, nil, Request{}, contract.FailureCapabilityUnsupported},
		{"negotiated but gone", "generic", []string{"bash"}, false,
			&contract.RenewalSupport{Reset: contract.RenewalReset{WrapperMediated: contract.SupportSynthesized}}, Request{}, contract.FailureCapabilityDegraded},
		{"resume without harness id", "claude", []string{"claude"}, true, nil, Request{Resume: true}, contract.FailureIdentityUnavailable},
		{"oversized payload", "claude", []string{"claude"}, false, nil,
			Request{Payloads: []contract.PayloadEnvelope{payload("pay_big", strings.Repeat("x", DefaultMaxBytes+1))}}, contract.FailurePayloadTooLarge},
		{"expired payload", "claude", []string{"claude"}, false, nil, Request{Payloads: []contract.PayloadEnvelope{expired}}, contract.FailurePayloadRejected},
		{"no launch route for the placement", "claude", []string{"claude"}, false, nil,
			Request{Payloads: []contract.PayloadEnvelope{payload("pay_side", "x", contract.PlacementSideChannelContext)}}, contract.FailurePlacementUnavailable},
		{"developer frame on a resumed codex thread", "codex", []string{"codex"}, false, nil,
			Request{Resume: true, Payloads: []contract.PayloadEnvelope{payload("pay_dev", "x", contract.PlacementDeveloperEquivalentFrame)}}, contract.FailurePlacementUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			o := w.orchestrator(t, tt.adapter, tt.argv...)
			o.Negotiated = tt.negotiated
			if tt.noID {
				o.HarnessSessionID = nil
			}
			_, err := o.Renew(t.Context(), tt.req)
			var re *Error
			if !errors.As(err, &re) || re.Class != tt.want {
				t.Fatalf("Renew: %v, want class %s", err, tt.want)
			}
			if w.stops != 0 || len(w.starts) != 0 || len(w.ledger) != 0 || !w.running {
				t.Errorf("touched the harness: stops %d starts %d records %v", w.stops, len(w.starts), events(w.ledger))
			}
			if pending, _ := o.Store.Pending(); len(pending) != 0 {
				t.Errorf("refused payloads stored: %v", ids(pending))
			}
			st, _ := ReadStatus(o.StatusPath)
			if st.State != StateFailed || st.LastError == nil || st.LastError.FailureClass != tt.want || st.LastError.RetryClass != tt.want.DefaultRetry() {
				t.Errorf("status %+v", st)
			}
		})
	}
}

// TestRenewStepFailures: a failed stop or start leaves the payloads
// stored and the status failed with its class; the next renew delivers
// them once.
func TestRenewStepFailures(t *testing.T) {
	tests := []struct {
		name  string
		setup func(w *world)
		want  contract.FailureClass
	}{
		{"stop fails", func(w *world) { w.stopErr = errors.New("harness stuck") }, contract.FailureTransportError},
		{"stop times out", func(w *world) { w.stopErr = fmt.Errorf("wait: %w", context.DeadlineExceeded) }, contract.FailureTimeout},
		{"start fails", func(w *world) { w.startErr = errors.New("exec: no such file") }, contract.FailurePayloadRejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			tt.setup(w)
			o := w.orchestrator(t, "claude", "claude")
			_, err := o.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{payload("pay_1", "body")}})
			if ClassOf(err) != tt.want {
				t.Fatalf("Renew: %v, want %s", err, tt.want)
			}
			st, _ := ReadStatus(o.StatusPath)
			if st.State != StateFailed || st.LastError.FailureClass != tt.want || !st.PayloadPending {
				t.Errorf("status %+v", st)
			}
			if pending, _ := o.Store.Pending(); len(pending) != 1 {
				t.Fatalf("payload lost after a failed step: %v", ids(pending))
			}
			out, err := o.Renew(t.Context(), Request{})
			if err != nil || out.State != StateDelivered {
				t.Fatalf("second renew: %+v, %v", out, err)
			}
			delivered := 0
			for _, argv := range w.starts {
				if slices.ContainsFunc(argv, func(s string) bool { return strings.Contains(s, `"pay_1"`) }) {
					delivered++
				}
			}
			if delivered != 1 {
				t.Errorf("pay_1 delivered %d times", delivered)
			}
			if st, _ := ReadStatus(o.StatusPath); st.Attempt != 2 || st.LastError != nil {
				t.Errorf("status after retry %+v", st)
			}
		})
	}
}

// TestRecoverAfterCrashAtEveryStep kills the renewal at every step (the
// wrapper dies), then a new Orchestrator over the same files recovers:
// the renewal finishes, every step is recorded once (after deduplication
// by attempt and step), and the payload is delivered to exactly one
// running harness and then dropped.
func TestRecoverAfterCrashAtEveryStep(t *testing.T) {
	points := []struct {
		at string
		// wantStarts is the number of harness starts carrying the payload
		// across both wrappers; 2 once the first harness was started with
		// it (it died with its wrapper, so recovery starts another).
		wantStarts int
		// wantRecovered is false when the crash hit after the renewal was
		// already complete on disk.
		wantRecovered bool
	}{
		{"before record session.ending", 1, true},
		{"after record session.ending", 1, true},
		{"before stop", 1, true},
		{"after stop", 1, true},
		{"before record session.ended", 1, true},
		{"after record session.ended", 1, true},
		{"before record session.starting", 1, true},
		{"after record session.starting", 1, true},
		{"before start", 1, true},
		{"after start", 2, true},
		{"before record session.started", 2, true},
		{"after record session.started", 2, true},
	}
	for _, pt := range points {
		t.Run(pt.at, func(t *testing.T) {
			w := newWorld(t)
			w.crashAt = pt.at
			first := w.orchestrator(t, "claude", "claude")
			if !runUntilCrash(t, func() {
				_, _ = first.Renew(t.Context(), Request{Resume: true, Payloads: []contract.PayloadEnvelope{payload("pay_1", "body-1")}})
			}) {
				t.Fatalf("no crash at %q", pt.at)
			}
			st, _ := ReadStatus(StatusPath(w.dir))
			if !st.State.InProgress() {
				t.Fatalf("after a crash at %q the status is %s", pt.at, st.State)
			}
			// The wrapper died, and with it the harness it ran.
			w.running = false

			second := w.orchestrator(t, "claude", "claude")
			out, err := second.Recover(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if out.State != StateDelivered || out.Recovered != pt.wantRecovered {
				t.Errorf("outcome %+v", out)
			}
			if got := events(w.deduped()); strings.Join(got, " ") != "session.ending session.ended session.starting session.started" {
				t.Errorf("recorded (deduplicated) %v; raw %v", got, events(w.ledger))
			}
			// A crash between a record and the status write after it
			// records that step again; the repeat carries the same
			// renewal_attempt and renewal_step, so consumers drop it.
			wantRaw := 4
			if strings.HasPrefix(pt.at, "after record") {
				wantRaw = 5
			}
			if len(w.ledger) != wantRaw {
				t.Errorf("raw records %v, want %d", events(w.ledger), wantRaw)
			}
			var deliveredReceipts int
			for _, r := range w.deduped() {
				for _, pr := range r.receipts {
					if pr.PayloadID == "pay_1" && pr.Status == contract.PlacementOutcomeDelivered {
						deliveredReceipts++
					}
				}
			}
			if deliveredReceipts != 1 {
				t.Errorf("%d delivered receipts for pay_1, want 1", deliveredReceipts)
			}
			if len(w.starts) != pt.wantStarts {
				t.Errorf("harness started %d times with the payload, want %d", len(w.starts), pt.wantStarts)
			}
			for _, argv := range w.starts {
				if !slices.Contains(argv, "--resume") || !strings.Contains(strings.Join(argv, " "), `"pay_1"`) {
					t.Errorf("start %q does not resume with the payload", argv)
				}
			}
			if pending, _ := second.Store.Pending(); len(pending) != 0 {
				t.Errorf("payload still stored after recovery: %v", ids(pending))
			}
			// Recovering again does nothing.
			n, starts := len(w.ledger), len(w.starts)
			if out, err := second.Recover(t.Context()); err != nil || out.State != StateDelivered || len(w.ledger) != n || len(w.starts) != starts {
				t.Errorf("second Recover: %+v, %v; records %d→%d starts %d→%d", out, err, n, len(w.ledger), starts, len(w.starts))
			}
		})
	}
}

// TestRenewContinuesInterruptedRenewal: a second renew after a crash
// finishes the first one's delivery and includes its own payload, each
// delivered once.
func TestRenewContinuesInterruptedRenewal(t *testing.T) {
	for _, at := range []string{"after record session.ending", "after stop", "after start"} {
		t.Run(at, func(t *testing.T) {
			w := newWorld(t)
			w.crashAt = at
			first := w.orchestrator(t, "claude", "claude")
			runUntilCrash(t, func() {
				_, _ = first.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{payload("pay_1", "one")}})
			})
			second := w.orchestrator(t, "claude", "claude")
			out, err := second.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{payload("pay_2", "two")}})
			if err != nil || out.State != StateDelivered {
				t.Fatalf("second renew: %+v, %v", out, err)
			}
			count := map[string]int{}
			for _, r := range w.ledger {
				for _, pr := range r.receipts {
					if pr.Status == contract.PlacementOutcomeDelivered {
						count[pr.PayloadID]++
					}
				}
			}
			if count["pay_1"] != 1 || count["pay_2"] != 1 {
				t.Errorf("delivered receipts %v, want one each", count)
			}
			if pending, _ := second.Store.Pending(); len(pending) != 0 {
				t.Errorf("still stored: %v", ids(pending))
			}
		})
	}
}

// TestRecoverExpiredPayload: a payload that expires while its renewal is
// interrupted is not delivered; the harness still comes back and the
// status says expired with payload_rejected.
func TestRecoverExpiredPayload(t *testing.T) {
	w := newWorld(t)
	w.crashAt = "after stop"
	first := w.orchestrator(t, "claude", "claude")
	p := payload("pay_1", "soon stale")
	exp := w.clock.t.Add(time.Minute).Unix()
	p.ExpiresAtEpochS = &exp
	runUntilCrash(t, func() { _, _ = first.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{p}}) })
	w.clock.Advance(2 * time.Minute)
	w.running = false
	second := w.orchestrator(t, "claude", "claude")
	out, err := second.Recover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if out.State != StateExpired || len(out.PayloadReceipts) != 1 || out.PayloadReceipts[0].Status != contract.PlacementOutcomeFailed {
		t.Fatalf("outcome %+v", out)
	}
	if len(w.starts) != 1 || strings.Contains(strings.Join(w.starts[0], " "), "soon stale") {
		t.Errorf("starts %q", w.starts)
	}
	st, _ := ReadStatus(second.StatusPath)
	if st.LastError == nil || st.LastError.FailureClass != contract.FailurePayloadRejected {
		t.Errorf("status %+v", st)
	}
	if list, _ := second.Store.List(); len(list) != 0 {
		t.Errorf("expired payload kept: %+v", list)
	}
}

func TestRecoverWithNothingToDo(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "claude", "claude")
	out, err := o.Recover(t.Context())
	if err != nil || out.State != StateNotAttempted || out.Started || len(w.ledger) != 0 || w.stops != 0 {
		t.Fatalf("Recover on a fresh session: %+v, %v", out, err)
	}
}

// TestRenewKeepsUndeliverableStoredPayload: a payload stored earlier
// (continuation put) whose only placement cannot be met at launch gets a
// failed receipt and stays stored; the renewal itself is delivered.
// TestRenewKeepsUndeliverableStoredPayload: a stored payload the
// relaunch cannot place is not delivered, and the renewal says so: state
// undelivered (not delivered), its id named, payload_pending true, the
// payload kept in the store labelled with the attempt that left it.
func TestRenewKeepsUndeliverableStoredPayload(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "claude", "claude")
	if _, err := o.Store.Put(payload("pay_side", "x", contract.PlacementSideChannelContext)); err != nil {
		t.Fatal(err)
	}
	out, err := o.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{payload("pay_1", "one")}})
	if err != nil || out.State != StateUndelivered || !out.Started || strings.Join(out.UndeliveredIDs, ",") != "pay_side" || out.DroppedUndelivered {
		t.Fatalf("Renew: %+v, %v", out, err)
	}
	status := map[string]contract.PlacementOutcome{}
	for _, r := range out.PayloadReceipts {
		status[r.PayloadID] = r.Status
	}
	if status["pay_1"] != contract.PlacementOutcomeDelivered || status["pay_side"] != contract.PlacementOutcomeFailed {
		t.Errorf("receipts %v", status)
	}
	st, err := ReadStatus(o.StatusPath)
	if err != nil || st.State != StateUndelivered || !st.PayloadPending || strings.Join(st.UndeliveredIDs, ",") != "pay_side" ||
		st.LastError == nil || st.LastError.FailureClass != contract.FailurePlacementUnavailable || !strings.Contains(st.LastError.Message, "pay_side") {
		t.Errorf("status %+v, %v", st, err)
	}
	entries, _ := o.Store.List()
	if len(entries) != 1 || entries[0].PayloadID != "pay_side" || entries[0].Undelivered == nil ||
		entries[0].Undelivered.Attempt != 1 || entries[0].Undelivered.Status != contract.PlacementOutcomeFailed {
		t.Errorf("stored after renewal: %+v, want pay_side only, labelled", entries)
	}
	if strings.Contains(strings.Join(w.starts[0], " "), `"pay_side"`) {
		t.Error("undeliverable payload placed on the command line")
	}
	if got := w.ledger[len(w.ledger)-1]; got.ev != contract.EventSessionStarted || got.summary["undelivered_payloads"] != "kept" {
		t.Errorf("session.started summary %v", got.summary)
	}
}

// TestRenewDropsUndeliverable: with DropUndelivered the payload the
// relaunch cannot place is dropped, its failed receipt recorded.
func TestRenewDropsUndeliverable(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "claude", "claude")
	if _, err := o.Store.Put(payload("pay_side", "x", contract.PlacementSideChannelContext)); err != nil {
		t.Fatal(err)
	}
	out, err := o.Renew(t.Context(), Request{DropUndelivered: true})
	if err != nil || out.State != StateUndelivered || !out.DroppedUndelivered {
		t.Fatalf("Renew: %+v, %v", out, err)
	}
	if pending, _ := o.Store.Pending(); len(pending) != 0 {
		t.Errorf("stored after a dropping renewal: %v", ids(pending))
	}
	st, _ := ReadStatus(o.StatusPath)
	if st.PayloadPending || !strings.Contains(st.LastError.Message, "dropped") {
		t.Errorf("status %+v", st)
	}
	if got := w.ledger[len(w.ledger)-1]; got.summary["undelivered_payloads"] != "dropped" || len(got.receipts) != 1 || got.receipts[0].Status != contract.PlacementOutcomeFailed {
		t.Errorf("session.started %v %v", got.summary, got.receipts)
	}
}

// TestUndeliveredPayloadIsCarriedOpenly: a payload a resumed Codex could
// not take waits; the next (fresh) renewal delivers it and names it as
// carried over, in its outcome, status and session.started.
func TestUndeliveredPayloadIsCarriedOpenly(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "codex", "codex")
	if _, err := o.Store.Put(payload("pay_dev", "instructions")); err != nil {
		t.Fatal(err)
	}
	out, err := o.Renew(t.Context(), Request{Resume: true})
	if err != nil || out.State != StateUndelivered || strings.Join(out.UndeliveredIDs, ",") != "pay_dev" {
		t.Fatalf("resumed Renew: %+v, %v", out, err)
	}
	out, err = o.Renew(t.Context(), Request{})
	if err != nil || out.State != StateDelivered || strings.Join(out.CarriedIDs, ",") != "pay_dev" || len(out.UndeliveredIDs) != 0 {
		t.Fatalf("fresh Renew: %+v, %v", out, err)
	}
	st, _ := ReadStatus(o.StatusPath)
	if strings.Join(st.CarriedIDs, ",") != "pay_dev" || st.PayloadPending {
		t.Errorf("status %+v", st)
	}
	if got := w.ledger[len(w.ledger)-1]; fmt.Sprint(got.summary["carried_payload_ids"]) != "[pay_dev]" {
		t.Errorf("session.started summary %v", got.summary)
	}
	if pending, _ := o.Store.Pending(); len(pending) != 0 {
		t.Errorf("stored after delivery: %v", ids(pending))
	}
}

// TestRefusalHasItsOwnTimes: a refused renewal is an attempt of its own
// in the status: its own time, none of the previous attempt's payloads.
func TestRefusalHasItsOwnTimes(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "claude", "claude")
	if _, err := o.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{payload("pay_1", "one")}}); err != nil {
		t.Fatal(err)
	}
	first, _ := ReadStatus(o.StatusPath)
	w.clock.Advance(time.Hour)
	big := payload("pay_big", strings.Repeat("x", DefaultMaxBytes+1))
	if _, err := o.Renew(t.Context(), Request{Payloads: []contract.PayloadEnvelope{big}}); err == nil {
		t.Fatal("an oversized payload was accepted")
	}
	st, _ := ReadStatus(o.StatusPath)
	if st.State != StateFailed || st.Attempt != first.Attempt+1 || st.StartedAt == nil || !st.StartedAt.Equal(w.clock.Now().UTC()) ||
		st.FinishedAt == nil || len(st.PayloadIDs) != 0 || len(st.PayloadReceipts) != 0 {
		t.Errorf("status after the refusal %+v (first %+v)", st, first)
	}
}

// TestRenewArgvPlacementNeedsOptIn: where the relaunch's only placement
// would leave the payload body in argv (a resumed Codex thread's prompt,
// Gemini CLI's first prompt), the renewal is refused before touching the
// harness — placement_unavailable, saying why — unless the adapter was
// made WithArgvPayloads; then it is delivered there.
func TestRenewArgvPlacementNeedsOptIn(t *testing.T) {
	const secret = "ARGV-SECRET-2c9d"
	for _, tc := range []struct {
		name, adapter string
		argv          []string
		resume        bool
	}{
		{"codex resume", "codex", []string{"codex"}, true},
		{"gemini resume", "gemini", []string{"gemini"}, true},
		{"gemini fresh", "gemini", []string{"gemini"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := Request{Resume: tc.resume, Payloads: []contract.PayloadEnvelope{payload("pay_1", secret, contract.PlacementPrePromptFrame)}}
			w := newWorld(t)
			o := w.orchestrator(t, tc.adapter, tc.argv...)
			_, err := o.Renew(t.Context(), req)
			var re *Error
			if !errors.As(err, &re) || re.Class != contract.FailurePlacementUnavailable || !strings.Contains(err.Error(), adapters.ErrPayloadInArgv.Error()) {
				t.Fatalf("Renew: %v, want placement_unavailable saying ErrPayloadInArgv", err)
			}
			if w.stops != 0 || len(w.starts) != 0 {
				t.Errorf("touched the harness: stops %d starts %d", w.stops, len(w.starts))
			}

			w = newWorld(t)
			o = w.orchestrator(t, tc.adapter, tc.argv...)
			o.Adapter = o.Adapter.WithArgvPayloads()
			out, err := o.Renew(t.Context(), req)
			if err != nil || out.State != StateDelivered || len(w.starts) != 1 {
				t.Fatalf("with the opt-in: %+v, %v, starts %q", out, err, w.starts)
			}
			if !strings.Contains(strings.Join(w.starts[0], " "), secret) {
				t.Errorf("with the opt-in, started %q: the body is not in argv", w.starts[0])
			}
		})
	}
}

// TestRefusalIsRecordedAsAsked: a refused renewal's status keeps what was
// asked (resume, reason, drop_undelivered), not a fresh renewal's
// defaults: `renew --note x --resume` refused is recorded as a resume.
func TestRefusalIsRecordedAsAsked(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "codex", "codex")
	req := Request{Resume: true, Reason: "handoff", DropUndelivered: true,
		Payloads: []contract.PayloadEnvelope{payload("pay_dev", "x", contract.PlacementDeveloperEquivalentFrame)}}
	if _, err := o.Renew(t.Context(), req); err == nil {
		t.Fatal("a developer frame on a resumed codex thread was accepted")
	}
	st, _ := ReadStatus(o.StatusPath)
	if st.State != StateFailed || !st.Resume || st.Reason != "handoff" || !st.DropUndelivered {
		t.Errorf("refused status %+v: want failed, resume, reason and drop_undelivered as asked", st)
	}
}

// TestRelaunchThatDiesIsAFailedRenewal: a relaunch that exits before it
// is ready fails the renewal (adapter_unavailable, saying so), records
// that harness session's end, keeps the payloads stored, and starts the
// person's own command line again so the session goes on.
func TestRelaunchThatDiesIsAFailedRenewal(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "claude", "claude", "--model", "m")
	w.startErr = &ExitedBeforeReady{Facts: contract.ExitFacts{Code: 42, FromWaitStatus: true}}
	out, err := o.Renew(t.Context(), Request{Resume: true, Payloads: []contract.PayloadEnvelope{payload("pay_1", "body-1")}})
	var re *Error
	if !errors.As(err, &re) || re.Class != contract.FailureAdapterUnavailable || !strings.Contains(err.Error(), "exit code 42") {
		t.Fatalf("Renew: %v, want adapter_unavailable saying the relaunch exited with 42", err)
	}
	if out.State != StateFailed || !out.Started {
		t.Errorf("outcome %+v: want failed, with the harness started again", out)
	}
	if len(w.starts) != 1 || strings.Join(w.starts[0], " ") != "claude --model m" {
		t.Errorf("started %q after the relaunch died, want the person's own command line", w.starts)
	}
	var steps []string
	for _, r := range w.ledger {
		steps = append(steps, fmt.Sprint(r.ev, "/", r.summary["renewal_step"]))
	}
	want := "session.ending/ending session.ended/ended session.starting/starting session.ended/relaunch_failed session.starting/fallback_starting session.started/fallback_started"
	if strings.Join(steps, " ") != want {
		t.Errorf("recorded %v\nwant %s", steps, want)
	}
	if ended := w.ledger[3].summary; ended["exit_code"] != 42 || ended["failure_class"] != string(contract.FailureAdapterUnavailable) {
		t.Errorf("the died relaunch's session.ended: %v", ended)
	}
	st, _ := ReadStatus(o.StatusPath)
	if st.State != StateFailed || st.LastError == nil || !st.Resume {
		t.Errorf("status %+v", st)
	}
	if pending, _ := o.Store.Pending(); len(pending) != 1 {
		t.Errorf("pending %v, want the payload kept", ids(pending))
	}
}
