package router

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/callback"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var t0 = time.Date(2026, 5, 6, 20, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return t0 }

// testManifest claims pre_session natively (8 KiB) and nothing else.
func testManifest() contract.AdapterManifest {
	max := 8192
	return contract.AdapterManifest{
		ContractVersion:  contract.Version,
		AdapterID:        "codex",
		AdapterVersion:   "0.1.0",
		DisplayName:      "Codex",
		Role:             contract.AdapterRole("primary_worker"),
		IntegrationModes: []contract.IntegrationMode{contract.ModeLauncherWrapper, contract.ModeManualSkill},
		LifecycleEvents: map[contract.Event]contract.EventSupport{
			contract.EventSessionStarted: {Support: contract.SupportNative, Modes: []contract.IntegrationMode{contract.ModeLauncherWrapper}},
		},
		Placement: map[contract.ManifestPlacementClass]contract.PlacementSupport{
			contract.ManifestPreSession:      {Support: contract.SupportNative, MaxBytes: &max},
			contract.ManifestPreFrameLeading: {Support: contract.SupportUnavailable},
		},
		ContextPressure: contract.ContextPressureSupport{Support: contract.SupportUnavailable},
		Receipts:        contract.ReceiptsSupport{LifeloopSynthesized: true, ReceiptLedger: contract.SupportNative},
	}
}

type fakeClient struct {
	mu     sync.Mutex
	got    []contract.DispatchEnvelope
	invoke func(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure)
}

func (c *fakeClient) Invoke(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
	c.mu.Lock()
	c.got = append(c.got, env)
	c.mu.Unlock()
	return c.invoke(ctx, env)
}

func (c *fakeClient) calls() []contract.DispatchEnvelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]contract.DispatchEnvelope(nil), c.got...)
}

func answer(status contract.ReceiptStatus) *fakeClient {
	return &fakeClient{invoke: func(context.Context, contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
		return contract.CallbackResponse{SchemaVersion: contract.Version, Status: status}, nil
	}}
}

type memSink struct {
	mu  sync.Mutex
	got []contract.LifecycleReceipt
	w   []contract.Warning
}

func (s *memSink) Write(r contract.LifecycleReceipt) {
	s.mu.Lock()
	s.got = append(s.got, r)
	s.mu.Unlock()
}

func (s *memSink) TakeWarnings() []contract.Warning {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.w
	s.w = nil
	return w
}

func (s *memSink) receipts() []contract.LifecycleReceipt {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]contract.LifecycleReceipt(nil), s.got...)
}

func newRouter(t *testing.T, cfg Config) *Router {
	t.Helper()
	if cfg.Manifest.AdapterID == "" {
		cfg.Manifest = testManifest()
	}
	if cfg.Mode == "" {
		cfg.Mode = contract.ModeLauncherWrapper
	}
	if cfg.IDs == nil {
		cfg.IDs = &ids.Sequential{}
	}
	if cfg.Now == nil {
		cfg.Now = fixedNow
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

func route(t *testing.T, r *Router, in moment.Moment) Result {
	t.Helper()
	res, err := r.Route(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if err := res.Receipt.Validate(); err != nil {
		t.Fatalf("invalid receipt: %v\n%+v", err, res.Receipt)
	}
	return res
}

func payload(id string, placements ...contract.AcceptablePlacement) contract.PayloadEnvelope {
	p := testutil.Payload(id, "hello", placements...)
	p.ClientID, p.Format = "c", "text"
	return p
}

func TestReceiptSynthesis(t *testing.T) {
	r := newRouter(t, Config{})
	a := route(t, r, moment.Moment{Event: contract.EventSessionStarted, HarnessSessionID: "hs-1"})
	b := route(t, r, moment.Moment{Event: contract.EventSupervisorTick, EventID: "hook-42", Parent: &a.Receipt.ReceiptID})

	if a.Receipt.Status != contract.StatusObserved || a.Receipt.Sequence != nil {
		t.Fatalf("first receipt: status %s sequence %v", a.Receipt.Status, a.Receipt.Sequence)
	}
	if !strings.HasPrefix(a.Receipt.ReceiptID, "lfr_") || !strings.HasPrefix(a.Receipt.EventID, "evt_") || !strings.HasPrefix(a.Receipt.InvocationID, "inv_") {
		t.Fatalf("id prefixes: %s %s %s", a.Receipt.ReceiptID, a.Receipt.EventID, a.Receipt.InvocationID)
	}
	if a.Receipt.ReceiptID == b.Receipt.ReceiptID || a.Receipt.ReceiptID == a.Receipt.EventID {
		t.Fatal("receipt ids must be fresh and distinct from event ids")
	}
	if b.Receipt.EventID != "hook-42" {
		t.Fatalf("harness event id not used: %s", b.Receipt.EventID)
	}
	if a.Receipt.InvocationID != b.Receipt.InvocationID {
		t.Fatal("receipts of one invocation must share invocation_id")
	}
	if b.Receipt.ParentReceiptID == nil || *b.Receipt.ParentReceiptID != a.Receipt.ReceiptID {
		t.Fatal("parent_receipt_id not chained")
	}
	if a.Receipt.AtEpochS != t0.Unix() || a.Receipt.AdapterID != "codex" || a.Receipt.ClientID != DefaultClientID ||
		a.Receipt.IntegrationMode != contract.ModeLauncherWrapper || *a.Receipt.HarnessSessionID != "hs-1" {
		t.Fatalf("receipt = %+v", a.Receipt)
	}
	js, _ := json.Marshal(a.Receipt)
	for _, k := range []string{`"sequence":null`, `"parent_receipt_id":null`, `"failure_class":null`, `"idempotency_key":null`} {
		if !strings.Contains(string(js), k) {
			t.Errorf("receipt JSON lacks %s: %s", k, js)
		}
	}
}

func TestRouteErrorsAndRefusals(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		in      moment.Moment
		class   contract.FailureClass
		retry   contract.RetryClass
		invoked bool
	}{
		{name: "frame event without frame context", in: moment.Moment{Event: contract.EventFrameOpening},
			class: contract.FailureInvalidRequest, retry: contract.RetryDoNot},
		{name: "required capability unsupported",
			cfg: Config{Require: &contract.CapabilityRequest{ClientID: "c", Events: map[contract.Event]contract.Requirement{
				contract.EventContextCompacted: {Level: contract.RequirementRequired}}}},
			in:    moment.Moment{Event: contract.EventSessionStarted},
			class: contract.FailureCapabilityUnsupported, retry: contract.RetryDoNot},
		{name: "required placement unavailable",
			in: moment.Moment{Event: contract.EventFrameOpening, Frame: &contract.FrameContext{FrameID: "f1", FrameClass: contract.FrameTopLevel},
				Payloads: []contract.PayloadEnvelope{payload("pay_1", contract.AcceptablePlacement{Placement: contract.PlacementPrePromptFrame, Requirement: contract.RequirementRequired})}},
			class: contract.FailurePlacementUnavailable, retry: contract.RetryAfterReconfigure},
		{name: "payload with a wrong digest",
			in: moment.Moment{Event: contract.EventSessionStarted, Payloads: []contract.PayloadEnvelope{func() contract.PayloadEnvelope {
				p := payload("pay_1", contract.AcceptablePlacement{Placement: contract.PlacementReceiptOnly, Requirement: contract.RequirementRequired})
				p.ContentDigest = contract.Ptr("sha256:" + strings.Repeat("0", 64))
				return p
			}()}},
			class: contract.FailureInvalidRequest, retry: contract.RetryDoNot},
		{name: "client times out", invoked: true,
			cfg: Config{Clients: []Client{&fakeClient{invoke: func(context.Context, contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
				return contract.CallbackResponse{}, &callback.Failure{Class: contract.FailureTimeout, Retry: contract.RetrySafe, Code: callback.CodeTimeout, Message: "slow"}
			}}}},
			in:    moment.Moment{Event: contract.EventSessionStarted},
			class: contract.FailureTimeout, retry: contract.RetrySafe},
		{name: "client answers failed", invoked: true,
			cfg: Config{Clients: []Client{&fakeClient{invoke: func(context.Context, contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
				return contract.CallbackResponse{SchemaVersion: contract.Version, Status: contract.StatusFailed,
					FailureClass: contract.Ptr(contract.FailurePayloadRejected), RetryClass: contract.Ptr(contract.RetryAfterReconfigure)}, nil
			}}}},
			in:    moment.Moment{Event: contract.EventSessionStarted},
			class: contract.FailurePayloadRejected, retry: contract.RetryAfterReconfigure},
		{name: "launcher failure override", in: moment.Moment{Event: contract.EventSessionStarting, Failure: contract.Ptr(contract.FailureAdapterUnavailable)},
			class: contract.FailureAdapterUnavailable, retry: contract.RetryAfterReconfigure},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := answer(contract.StatusDelivered)
			if tt.cfg.Clients == nil {
				tt.cfg.Clients = []Client{probe}
			}
			r := newRouter(t, tt.cfg)
			res := route(t, r, tt.in)
			rc := res.Receipt
			if rc.Status != contract.StatusFailed || rc.FailureClass == nil || *rc.FailureClass != tt.class || *rc.RetryClass != tt.retry {
				t.Fatalf("status=%s failure=%v retry=%v, want failed %s %s; warnings %+v", rc.Status, rc.FailureClass, rc.RetryClass, tt.class, tt.retry, rc.Warnings)
			}
			if len(rc.Warnings) == 0 && tt.in.Failure == nil {
				t.Fatal("a failure without a warning explaining it")
			}
			invoked := len(tt.cfg.Clients[0].(*fakeClient).calls()) > 0
			if tt.cfg.Clients[0] == Client(probe) && tt.in.Failure == nil {
				if invoked {
					t.Fatal("a refused moment must not reach the client")
				}
			} else if tt.invoked && !invoked {
				t.Fatal("client not invoked")
			}
		})
	}
	for _, ev := range []contract.Event{contract.EventReceiptEmitted, "session.exploded"} {
		t.Run(string(ev)+" produces no receipt", func(t *testing.T) {
			r := newRouter(t, Config{})
			if _, err := r.Route(context.Background(), moment.Moment{Event: ev}); err == nil {
				t.Fatal("no error")
			}
		})
	}
}

func TestClientsAndPayloads(t *testing.T) {
	clientPayload := payload("pay_client", contract.AcceptablePlacement{Placement: contract.PlacementDeveloperEquivalentFrame, Requirement: contract.RequirementPreferred})
	c1 := answer(contract.StatusSkipped)
	c2 := &fakeClient{invoke: func(context.Context, contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
		return contract.CallbackResponse{SchemaVersion: contract.Version, Status: contract.StatusDelivered,
			ClientPayloads: []contract.PayloadEnvelope{clientPayload},
			Warnings:       []contract.Warning{{Code: "client_note", Message: "fyi"}}}, nil
	}}
	r := newRouter(t, Config{Clients: []Client{c1, c2}})
	in := moment.Moment{
		Event: contract.EventSessionStarted, HarnessSessionID: "hs", IdempotencyKey: contract.Ptr("idem_1"),
		Payloads: []contract.PayloadEnvelope{
			payload("pay_a", contract.AcceptablePlacement{Placement: contract.PlacementPrePromptFrame, Requirement: contract.RequirementPreferred}),
			payload("pay_b", contract.AcceptablePlacement{Placement: contract.PlacementSideChannelContext, Requirement: contract.RequirementOptional}),
		},
	}
	res := route(t, r, in)
	rc := res.Receipt
	if rc.Status != contract.StatusDelivered {
		t.Fatalf("status = %s, want delivered (strongest of skipped and delivered)", rc.Status)
	}
	want := []struct {
		id        string
		placement contract.PlacementClass
		status    contract.PlacementOutcome
	}{
		{"pay_a", contract.PlacementPrePromptFrame, contract.PlacementOutcomeDelivered},
		{"pay_b", contract.PlacementSideChannelContext, contract.PlacementOutcomeSkipped},
		{"pay_client", contract.PlacementDeveloperEquivalentFrame, contract.PlacementOutcomeDelivered},
	}
	if len(rc.PayloadReceipts) != len(want) {
		t.Fatalf("payload receipts = %+v", rc.PayloadReceipts)
	}
	for i, w := range want {
		pr := rc.PayloadReceipts[i]
		if pr.PayloadID != w.id || pr.Placement != w.placement || pr.Status != w.status || pr.PayloadKind != "note" || pr.ByteSize != 5 ||
			pr.ContentDigest == nil || *pr.ContentDigest != contract.Digest([]byte("hello")) {
			t.Errorf("payload receipt %d = %+v, want %+v", i, pr, w)
		}
	}
	if len(res.ClientPayloads) != 1 || len(res.Placements) != 3 {
		t.Fatalf("client payloads %d placements %d", len(res.ClientPayloads), len(res.Placements))
	}
	if !hasWarning(rc, "client_note") || !hasWarning(rc, WarnPayloadSkipped) {
		t.Fatalf("warnings = %+v", rc.Warnings)
	}
	// What the client saw: the request, and only the deliverable payload.
	env := c1.calls()[0]
	if env.Request.Event != contract.EventSessionStarted || env.Request.EventID != rc.EventID || env.Request.InvocationID != rc.InvocationID ||
		env.Request.AdapterVersion != "0.1.0" || *env.Request.IdempotencyKey != "idem_1" {
		t.Fatalf("request = %+v", env.Request)
	}
	if len(env.Payloads) != 1 || env.Payloads[0].PayloadID != "pay_a" || len(env.Request.PayloadRefs) != 1 {
		t.Fatalf("dispatched payloads = %+v refs = %+v", env.Payloads, env.Request.PayloadRefs)
	}
	if err := env.Validate(); err != nil {
		t.Fatalf("dispatch envelope invalid: %v", err)
	}
}

func TestPreferredCapabilityDegrades(t *testing.T) {
	r := newRouter(t, Config{Require: &contract.CapabilityRequest{ClientID: "c", ContextPressure: &contract.Requirement{Level: contract.RequirementPreferred}}})
	rc := route(t, r, moment.Moment{Event: contract.EventSessionStarted}).Receipt
	if rc.Status != contract.StatusDegraded || len(rc.Warnings) == 0 {
		t.Fatalf("status=%s warnings=%+v", rc.Status, rc.Warnings)
	}
}

func hasWarning(r contract.LifecycleReceipt, code string) bool {
	for _, w := range r.Warnings {
		if w.Code == code {
			return true
		}
	}
	return false
}

func openLedger(t *testing.T) *ledger.Ledger {
	t.Helper()
	l, err := ledger.Open(filepath.Join(t.TempDir(), "receipts.jsonl"), ledger.Options{Sync: ledger.SyncNone, Now: fixedNow, IDs: &ids.Sequential{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

func TestLedgerAndSinks(t *testing.T) {
	sk := &memSink{}
	l := openLedger(t)
	r := newRouter(t, Config{Ledger: l, Sinks: []Sink{sk}})
	a := route(t, r, moment.Moment{Event: contract.EventSessionStarted, IdempotencyKey: contract.Ptr("idem_start")})
	b := route(t, r, moment.Moment{Event: contract.EventSupervisorTick, ExternalSequence: contract.Ptr(uint64(1)), HarnessSessionID: "hs"})
	c := route(t, r, moment.Moment{Event: contract.EventSupervisorTick, ExternalSequence: contract.Ptr(uint64(4)), HarnessSessionID: "hs"})
	if *a.Receipt.Sequence != 1 || *b.Receipt.Sequence != 2 {
		t.Fatalf("sequences %d %d", *a.Receipt.Sequence, *b.Receipt.Sequence)
	}
	if len(c.Extra) != 1 || c.Extra[0].Event != contract.EventReceiptGapDetected || *c.Receipt.Sequence != 4 {
		t.Fatalf("gap not detected: extra=%+v seq=%v", c.Extra, c.Receipt.Sequence)
	}
	// Identical redelivery (same event id, same content) is a replay.
	again := route(t, r, moment.Moment{Event: contract.EventSessionStarted, EventID: a.Receipt.EventID, IdempotencyKey: contract.Ptr("idem_start")})
	if !again.Replayed || again.Receipt.ReceiptID != a.Receipt.ReceiptID {
		t.Fatalf("replay not recognised: %+v", again)
	}
	got := sk.receipts()
	if len(got) != 4 {
		t.Fatalf("sink got %d receipts, want 4 (3 routed + 1 gap, replay not rewritten)", len(got))
	}
	for i, g := range got {
		if g.Sequence == nil || *g.Sequence != uint64(i+1) {
			t.Fatalf("sink receipt %d has sequence %v", i, g.Sequence)
		}
	}
}

type failingLedger struct{}

func (failingLedger) AppendWith(contract.LifecycleReceipt, ledger.AppendOptions) (contract.LifecycleReceipt, ledger.AppendResult, error) {
	return contract.LifecycleReceipt{}, ledger.AppendResult{}, errors.New("disk full")
}

func TestLedgerFailureStillReaches(t *testing.T) {
	sk := &memSink{}
	r := newRouter(t, Config{Ledger: failingLedger{}, Sinks: []Sink{sk}})
	res, err := r.Route(context.Background(), moment.Moment{Event: contract.EventSessionStarted})
	if err == nil || !hasWarning(res.Receipt, WarnLedgerFailed) || res.Receipt.Sequence != nil {
		t.Fatalf("err=%v receipt=%+v", err, res.Receipt)
	}
	if len(sk.receipts()) != 1 {
		t.Fatal("sink did not get the unrecorded receipt")
	}
}

func TestSinkWarningsGoOnNextReceipt(t *testing.T) {
	sk := &memSink{w: []contract.Warning{{Code: "sink_write_failed", Message: "x"}}}
	r := newRouter(t, Config{Sinks: []Sink{sk}})
	a := route(t, r, moment.Moment{Event: contract.EventSupervisorTick})
	b := route(t, r, moment.Moment{Event: contract.EventSupervisorTick})
	if !hasWarning(a.Receipt, "sink_write_failed") || hasWarning(b.Receipt, "sink_write_failed") {
		t.Fatalf("warnings: a=%+v b=%+v", a.Receipt.Warnings, b.Receipt.Warnings)
	}
}

// TestAsyncHangingClientDoesNotDelayRoute proves Route returns while an
// asynchronous client is stuck, that the stuck client's failure becomes
// its own receipt chained to the observed one, and that a full queue
// drops and reports instead of blocking.
func TestAsyncHangingClientDoesNotDelayRoute(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	hang := &fakeClient{invoke: func(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return contract.CallbackResponse{}, &callback.Failure{Class: contract.FailureTimeout, Retry: contract.RetrySafe, Code: callback.CodeTimeout, Message: "no answer"}
	}}
	sk := &memSink{}
	l := openLedger(t)
	r := newRouter(t, Config{AsyncClients: []Client{hang}, AsyncQueue: 2, Ledger: l, Sinks: []Sink{sk}})

	done := make(chan Result)
	go func() {
		var last Result
		for i := 0; i < 6; i++ {
			res, err := r.Route(context.Background(), moment.Moment{Event: contract.EventSupervisorTick})
			if err != nil {
				t.Error(err)
			}
			if i == 0 {
				<-started // the worker is now stuck on the first dispatch
			}
			last = res
		}
		done <- last
	}()
	var first Result
	select {
	case first = <-done:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("Route blocked behind a hanging asynchronous client")
	}
	// One dispatch in flight, two queued, three dropped.
	if d := r.async.Dropped(); d != 3 {
		t.Fatalf("dropped = %d, want 3", d)
	}
	next := route(t, r, moment.Moment{Event: contract.EventSupervisorTick})
	if !hasWarning(next.Receipt, WarnAsyncDropped) {
		t.Fatalf("drop not reported on the next receipt: %+v", next.Receipt.Warnings)
	}
	_ = first
	close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var failures []contract.LifecycleReceipt
	byID := map[string]contract.LifecycleReceipt{}
	for _, rc := range sk.receipts() {
		byID[rc.ReceiptID] = rc
		if rc.Status == contract.StatusFailed {
			failures = append(failures, rc)
		}
	}
	if len(failures) != 3 {
		t.Fatalf("failure receipts = %d, want 3 (one per dispatch that ran)", len(failures))
	}
	for _, f := range failures {
		parent, ok := byID[deref(f.ParentReceiptID)]
		if !ok || parent.Status != contract.StatusObserved || parent.EventID != f.EventID || parent.Event != f.Event {
			t.Fatalf("failure receipt not chained to its observed receipt: %+v", f)
		}
		if *f.FailureClass != contract.FailureTimeout || *f.RetryClass != contract.RetrySafe || f.Sequence == nil || !hasWarning(f, callback.CodeTimeout) {
			t.Fatalf("failure receipt = %+v", f)
		}
	}
}

func TestAsyncCloseDeadlineCancelsInFlight(t *testing.T) {
	hang := &fakeClient{invoke: func(ctx context.Context, env contract.DispatchEnvelope) (contract.CallbackResponse, *callback.Failure) {
		<-ctx.Done()
		return contract.CallbackResponse{}, &callback.Failure{Class: contract.FailureTimeout, Retry: contract.RetrySafe, Code: callback.CodeTimeout, Message: "cancelled"}
	}}
	r := newRouter(t, Config{AsyncClients: []Client{hang}})
	route(t, r, moment.Moment{Event: contract.EventSupervisorTick})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := r.Close(ctx); err == nil {
		t.Fatal("Close met its deadline with a hanging client and said nothing")
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestAsyncGoodClientRecordsNothingExtra(t *testing.T) {
	ok := answer(contract.StatusDelivered)
	sk := &memSink{}
	r := newRouter(t, Config{AsyncClients: []Client{ok}, Sinks: []Sink{sk}})
	route(t, r, moment.Moment{Event: contract.EventSessionStarted})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if len(ok.calls()) != 1 || len(sk.receipts()) != 1 {
		t.Fatalf("calls=%d receipts=%d", len(ok.calls()), len(sk.receipts()))
	}
}

func BenchmarkRoute(b *testing.B) {
	r, err := New(Config{Manifest: testManifest(), Mode: contract.ModeLauncherWrapper, Sinks: []Sink{&discardSink{}}})
	if err != nil {
		b.Fatal(err)
	}
	in := moment.Moment{Event: contract.EventSupervisorTick, HarnessSessionID: "hs", Summary: map[string]any{"activity": "idle"}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Route(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRouteLedgerNoSync(b *testing.B) {
	l, err := ledger.Open(filepath.Join(b.TempDir(), "receipts.jsonl"), ledger.Options{Sync: ledger.SyncNone})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r, err := New(Config{Manifest: testManifest(), Mode: contract.ModeLauncherWrapper, Ledger: l})
	if err != nil {
		b.Fatal(err)
	}
	in := moment.Moment{Event: contract.EventSupervisorTick, HarnessSessionID: "hs"}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Route(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}

type discardSink struct{}

func (discardSink) Write(contract.LifecycleReceipt) {}

// TestIdempotentReplayAcrossInvocations proves that a moment with an
// idempotency key but no harness event id, delivered again by another
// process (a new router on the same ledger), is a replay, not a conflict.
func TestIdempotentReplayAcrossInvocations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.jsonl")
	var first Result
	for i := 0; i < 2; i++ {
		l, err := ledger.Open(path, ledger.Options{Sync: ledger.SyncNone})
		if err != nil {
			t.Fatal(err)
		}
		r := newRouter(t, Config{Ledger: l, IDs: ids.NewULIDSource(nil, nil)})
		res := route(t, r, moment.Moment{Event: contract.EventContextCompacted, IdempotencyKey: contract.Ptr("idem_x")})
		_ = l.Close()
		if i == 0 {
			first = res
			if res.Replayed || !strings.HasPrefix(res.Receipt.EventID, "evt_") || strings.Contains(res.Receipt.EventID, "idem_x") {
				t.Fatalf("first delivery: %+v", res.Receipt)
			}
			continue
		}
		if !res.Replayed || res.Receipt.ReceiptID != first.Receipt.ReceiptID || res.Receipt.Status == contract.StatusFailed {
			t.Fatalf("redelivery not a replay: %+v", res.Receipt)
		}
	}
	other := keyedEventID(DefaultClientID, "codex", "idem_y")
	if other == first.Receipt.EventID {
		t.Fatal("different keys must give different event ids")
	}
}

// TestRefusedMomentsNeverReachAsyncClients: a moment lifeloop refuses
// before dispatch is recorded but not handed to asynchronous clients; an
// accepted one is.
func TestRefusedMomentsNeverReachAsyncClients(t *testing.T) {
	c := answer(contract.StatusDelivered)
	r := newRouter(t, Config{AsyncClients: []Client{c}})
	refused := route(t, r, moment.Moment{Event: contract.EventFrameOpening}) // no frame context
	if refused.Receipt.Status != contract.StatusFailed {
		t.Fatalf("status = %s", refused.Receipt.Status)
	}
	accepted := route(t, r, moment.Moment{Event: contract.EventSessionStarted})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	calls := c.calls()
	if len(calls) != 1 || calls[0].Request.EventID != accepted.Receipt.EventID {
		t.Fatalf("async client got %d dispatches, want only the accepted one", len(calls))
	}
}

// TestAsyncDispatchCarriesSequence: asynchronous clients see the ledger
// sequence of the receipt they are told about.
func TestAsyncDispatchCarriesSequence(t *testing.T) {
	c := answer(contract.StatusDelivered)
	r := newRouter(t, Config{AsyncClients: []Client{c}, Ledger: openLedger(t)})
	route(t, r, moment.Moment{Event: contract.EventSessionStarted})
	route(t, r, moment.Moment{Event: contract.EventSupervisorTick})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	calls := c.calls()
	if len(calls) != 2 || calls[1].Request.Sequence == nil || *calls[1].Request.Sequence != 2 {
		t.Fatalf("dispatches = %+v", calls)
	}
}
