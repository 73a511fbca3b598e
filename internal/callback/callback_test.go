package callback

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

func testEnvelope() contract.DispatchEnvelope {
	return contract.DispatchEnvelope{
		SchemaVersion: contract.Version,
		Request: contract.CallbackRequest{
			SchemaVersion:   contract.Version,
			Event:           contract.EventSessionStarted,
			EventID:         "evt_test",
			AdapterID:       "codex",
			AdapterVersion:  "0.1.0",
			IntegrationMode: contract.IntegrationMode("launcher_wrapper"),
			InvocationID:    "inv_test",
		},
	}
}

func TestInvokeFailures(t *testing.T) {
	tests := []struct {
		mode  string
		inv   func(*Invoker)
		class contract.FailureClass
		retry contract.RetryClass
		code  string
	}{
		{mode: "exit1", class: contract.FailureTransportError, retry: contract.RetryAfterReread, code: CodeExitNonzero},
		{mode: "noread", class: contract.FailureTransportError, retry: contract.RetrySafe, code: CodeStdinUnread},
		{mode: "hang", inv: func(i *Invoker) { i.Timeout = 200 * time.Millisecond }, class: contract.FailureTimeout, retry: contract.RetrySafe, code: CodeTimeout},
		{mode: "hang-noread", inv: func(i *Invoker) { i.Timeout = 200 * time.Millisecond }, class: contract.FailureTimeout, retry: contract.RetrySafe, code: CodeTimeout},
		{mode: "bigout", inv: func(i *Invoker) { i.StdoutCap = 4096 }, class: contract.FailureTransportError, retry: contract.RetryAfterReconfigure, code: CodeStdoutOverCap},
		{mode: "grandchild", inv: func(i *Invoker) { i.ExitGrace = 200 * time.Millisecond }, class: contract.FailureTransportError, retry: contract.RetryAfterReread, code: CodeStdoutHeldOpen},
		{mode: "badjson", class: contract.FailureTransportError, retry: contract.RetryAfterReconfigure, code: CodeResponseMalformed},
		{mode: "notjson", class: contract.FailureTransportError, retry: contract.RetryAfterReconfigure, code: CodeResponseMalformed},
		{mode: "empty", class: contract.FailureTransportError, retry: contract.RetryAfterReconfigure, code: CodeResponseMalformed},
		{mode: "twodocs", class: contract.FailureInvalidRequest, retry: contract.RetryDoNot, code: CodeResponseMultiple},
		{mode: "unknownfield", class: contract.FailureInvalidRequest, retry: contract.RetryDoNot, code: CodeResponseInvalid},
		{mode: "invalid", class: contract.FailureInvalidRequest, retry: contract.RetryDoNot, code: CodeResponseInvalid},
		{mode: "wrongversion", class: contract.FailureInvalidRequest, retry: contract.RetryDoNot, code: CodeResponseInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			inv := &Invoker{Path: fakeClient, Args: []string{tt.mode}}
			if tt.inv != nil {
				tt.inv(inv)
			}
			_, f := inv.Invoke(context.Background(), testEnvelope())
			if f == nil {
				t.Fatalf("mode %s: want a failure, got none", tt.mode)
			}
			if f.Class != tt.class || f.Retry != tt.retry || f.Code != tt.code {
				t.Fatalf("got %s/%s/%s, want %s/%s/%s (%s)", f.Class, f.Retry, f.Code, tt.class, tt.retry, tt.code, f.Message)
			}
			if f.Message == "" || len(f.Message) > 300 {
				t.Fatalf("message must be short and present: %q", f.Message)
			}
			if strings.Contains(f.Message, "xxxx") || strings.Contains(f.Message, "hello from") {
				t.Fatalf("message quotes client output: %q", f.Message)
			}
		})
	}
}

func TestInvokeMissingProgram(t *testing.T) {
	inv := &Invoker{Path: filepath.Join(t.TempDir(), "nope")}
	_, f := inv.Invoke(context.Background(), testEnvelope())
	if f == nil || f.Class != contract.FailureAdapterUnavailable || f.Code != CodeUnavailable {
		t.Fatalf("got %+v", f)
	}
}

func TestInvokeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	inv := &Invoker{Path: fakeClient, Args: []string{"hang"}, Timeout: time.Minute}
	done := make(chan *Failure)
	go func() {
		_, f := inv.Invoke(ctx, testEnvelope())
		done <- f
	}()
	cancel()
	f := <-done
	if f == nil || f.Class != contract.FailureTimeout {
		t.Fatalf("got %+v", f)
	}
}

func TestInvokeGood(t *testing.T) {
	tests := []struct {
		mode  string
		check func(t *testing.T, r contract.CallbackResponse)
	}{
		{mode: "good", check: func(t *testing.T, r contract.CallbackResponse) {
			if r.Status != contract.StatusDelivered {
				t.Fatalf("status = %s", r.Status)
			}
		}},
		{mode: "exactjson", check: func(t *testing.T, r contract.CallbackResponse) {
			if r.Status != contract.StatusDelivered {
				t.Fatalf("status = %s", r.Status)
			}
		}},
		{mode: "payloads", check: func(t *testing.T, r contract.CallbackResponse) {
			if len(r.ClientPayloads) != 1 || r.ClientPayloads[0].PayloadID != "pay_1" {
				t.Fatalf("client payloads = %+v", r.ClientPayloads)
			}
		}},
		{mode: "reports-failed", check: func(t *testing.T, r contract.CallbackResponse) {
			if r.Status != contract.StatusFailed || r.FailureClass == nil || *r.FailureClass != contract.FailurePayloadRejected {
				t.Fatalf("response = %+v", r)
			}
		}},
		{mode: "echo", check: func(t *testing.T, r contract.CallbackResponse) {
			want := map[string]any{
				"event": "session.started", "event_id": "evt_test",
				"session_id": "ses_1", "session_dir": "/s/ses_1", "state_dir": "/s",
			}
			for k, v := range want {
				if r.Metadata[k] != v {
					t.Errorf("metadata[%s] = %v, want %v", k, r.Metadata[k], v)
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			inv := &Invoker{Path: fakeClient, Args: []string{tt.mode}, SessionID: "ses_1", SessionDir: "/s/ses_1", StateDir: "/s"}
			resp, f := inv.Invoke(context.Background(), testEnvelope())
			if f != nil {
				t.Fatalf("unexpected failure: %v", f)
			}
			tt.check(t, resp)
		})
	}
}

func TestDecodeResponseNeverPanics(t *testing.T) {
	for _, in := range []string{"", "{", "[]", "null", `{"schema_version":1}`, `"x"`, "{} {}", `{"schema_version":"lifeloop.v0.2","status":"bogus"}`} {
		if _, f := decodeResponse([]byte(in)); f == nil {
			t.Errorf("%q decoded without failure", in)
		}
	}
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add([]byte(`{"schema_version":"lifeloop.v0.2","status":"delivered"}`))
	f.Add([]byte(`{} {}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		resp, fail := decodeResponse(b)
		if fail == nil && resp.SchemaVersion != contract.Version {
			t.Fatalf("accepted a response with schema_version %q", resp.SchemaVersion)
		}
	})
}

// BenchmarkInvoke measures one dispatch to a well-behaved client: process
// start, envelope on stdin, response decoded, group reaped.
func BenchmarkInvoke(b *testing.B) {
	inv := &Invoker{Path: fakeClient, Args: []string{"good"}}
	env := testEnvelope()
	ctx := context.Background()
	for b.Loop() {
		if _, f := inv.Invoke(ctx, env); f != nil {
			b.Fatal(f)
		}
	}
}
