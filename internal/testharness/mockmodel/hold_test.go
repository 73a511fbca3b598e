package mockmodel

import (
	"strings"
	"testing"
	"time"
)

// TestHoldTrigger: a request carrying the trigger is not answered until
// Release, one without it is answered at once, and after Release none
// waits.
func TestHoldTrigger(t *testing.T) {
	s := start(t, Config{HoldTrigger: "HOLD-7c1a"})
	const held = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"please HOLD-7c1a"}]}`
	const plain = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hello"}]}`
	answered := make(chan int, 1)
	go func() {
		status, _, _ := post(t, s, "/v1/messages", held)
		answered <- status
	}()
	for deadline := time.Now().Add(5 * time.Second); s.Held() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request with the trigger was never held")
		}
	}
	if status, _, _ := post(t, s, "/v1/messages", plain); status != 200 {
		t.Fatalf("a request without the trigger: status %d", status)
	}
	select {
	case status := <-answered:
		t.Fatalf("the held request was answered (%d) before Release", status)
	case <-time.After(300 * time.Millisecond):
	}
	s.Release()
	select {
	case status := <-answered:
		if status != 200 {
			t.Fatalf("the released request: status %d", status)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held request was not answered after Release")
	}
	if status, _, _ := post(t, s, "/v1/messages", held); status != 200 || s.Held() != 1 {
		t.Fatalf("after Release: status %d, held %d (want 200, 1)", status, s.Held())
	}
	s.Release()
}

// TestBytesPerToken: with BytesPerToken set, a conversation response
// reports the request's size as its input tokens, without cache tokens.
func TestBytesPerToken(t *testing.T) {
	s := start(t, Config{BytesPerToken: 4, Usage: Usage{InputTokens: 9, CacheReadInputTokens: 50, OutputTokens: 3}})
	body := `{"model":"m","max_tokens":10,"tools":[{"name":"Bash","input_schema":{}}],"messages":[{"role":"user","content":"` + strings.Repeat("x", 400) + `"}]}`
	status, _, msg := post(t, s, "/v1/messages", body)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	u, _ := msg["usage"].(map[string]any)
	if u["input_tokens"] != float64(len(body)/4) || u["cache_read_input_tokens"] != 0.0 || u["output_tokens"] != 3.0 {
		t.Fatalf("usage %v, want input %d, no cache, output 3", u, len(body)/4)
	}
}
