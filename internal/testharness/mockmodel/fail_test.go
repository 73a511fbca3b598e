package mockmodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// failPost posts body to path and returns the status, the retry-after
// header and the JSON body of an error answer.
func failPost(t *testing.T, s *Server, path, body string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("error body %q: %v", b, err)
	}
	return resp.StatusCode, resp.Header.Get("retry-after"), m
}

// TestFailNextEachWire: Fail(429, n) answers the next n model requests of
// every wire with its own rate-limit document and retry-after, then the
// mock answers as usual.
func TestFailNextEachWire(t *testing.T) {
	for _, tc := range []struct {
		path, body string
		errPath    []any
		want       string
	}{
		{"/v1/messages", `{"model":"m","stream":false,"messages":[{"role":"user","content":"hi"}],` + claudeTools + `}`, []any{"error", "type"}, "rate_limit_error"},
		{"/v1/responses", `{"model":"m","input":[],` + codexTools + `}`, []any{"error", "code"}, "rate_limit_exceeded"},
		{"/v1beta/models/gemini-2.5-flash:generateContent", `{"contents":[]}`, []any{"error", "status"}, "RESOURCE_EXHAUSTED"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			s := start(t, Config{})
			s.Fail(Failure{Status: http.StatusTooManyRequests, RetryAfter: 1500 * time.Millisecond}, 1)
			status, retry, m := failPost(t, s, tc.path, tc.body)
			if status != http.StatusTooManyRequests || retry != "2" {
				t.Fatalf("status %d retry-after %q, want 429 and 2", status, retry)
			}
			if got := dig(m, tc.errPath...); got != tc.want {
				t.Fatalf("%v = %v, want %s (body %v)", tc.errPath, got, tc.want, m)
			}
			if st, _, _ := post(t, s, tc.path, tc.body); st != http.StatusOK {
				t.Fatalf("the request after the n failed ones: %d, want 200", st)
			}
			if s.Failed() != 1 || len(s.RequestsOfKind(KindFailed)) != 1 {
				t.Fatalf("failed %d, recorded %d, want 1", s.Failed(), len(s.RequestsOfKind(KindFailed)))
			}
			s.Fail(Rate429, 0)
			for range 2 {
				if st, retry, _ := failPost(t, s, tc.path, tc.body); st != http.StatusTooManyRequests || retry != "1" {
					t.Fatalf("while set: %d retry-after %q, want 429 and 1", st, retry)
				}
			}
		})
	}
}
