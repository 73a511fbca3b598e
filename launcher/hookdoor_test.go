package launcher

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// TestHookDoor: a hook call posted to the session's door with its token
// is recorded like one forwarded by `lifeloop host-hook`; a call without
// the token, to another path or with another method records nothing.
func TestHookDoor(t *testing.T) {
	t.Parallel()
	f := newFixture(t, "echo ready; sleep 1")
	f.cfg.Adapter = adapters.AdapterOf(claude.Harness{})
	door, err := openHookDoor()
	if err != nil {
		t.Fatal(err)
	}
	defer door.close()
	f.cfg.hookDoor = door
	target := door.target()
	if !strings.HasPrefix(target.URL, "http://127.0.0.1:") || len(target.Token) < 32 {
		t.Fatalf("target %+v", target)
	}

	post := func(method, path, token, body string) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, method, target.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	prompt := func(id string) string {
		return `{"session_id":"0b8f4f43-3f44-4b36-9d55-000000000001","hook_event_name":"UserPromptSubmit","prompt_id":"` + id + `","prompt":"hi"}`
	}

	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return strings.Contains(f.out.String(), "ready") })
	if code, _ := post(http.MethodPost, "/claude/UserPromptSubmit", "not-the-token", prompt("p-refused")); code != http.StatusUnauthorized {
		t.Errorf("wrong token: status %d, want 401", code)
	}
	if code, _ := post(http.MethodPost, "/claude/UserPromptSubmit", "", prompt("p-refused")); code != http.StatusUnauthorized {
		t.Errorf("no token: status %d, want 401", code)
	}
	if code, _ := post(http.MethodGet, "/claude/UserPromptSubmit", target.Token, ""); code != http.StatusNotFound {
		t.Errorf("GET: status %d, want 404", code)
	}
	if code, _ := post(http.MethodPost, "/elsewhere", target.Token, prompt("p-refused")); code != http.StatusNotFound {
		t.Errorf("other path: status %d, want 404", code)
	}
	if code, body := post(http.MethodPost, "/claude/UserPromptSubmit", target.Token, prompt("p-1")); code != http.StatusOK || body != "" {
		t.Errorf("the session's call: status %d body %q, want 200 and no answer (nothing to place)", code, body)
	}
	<-done

	var opened []string
	for _, m := range f.rec.moments {
		if m.Event == contract.EventFrameOpening {
			opened = append(opened, m.Frame.FrameID+" "+m.Summary["source"].(string)+" "+m.Summary["hook"].(string))
		}
	}
	if strings.Join(opened, ",") != "p-1 hook UserPromptSubmit" {
		t.Errorf("frame.opening recorded: %q, want the one call with the token, from the hook", opened)
	}
	if code, _ := post(http.MethodPost, "/claude/Stop", target.Token, `{"session_id":"0b8f4f43-3f44-4b36-9d55-000000000001","prompt_id":"p-1"}`); code != http.StatusServiceUnavailable {
		t.Errorf("a call after the session ended: status %d, want 503", code)
	}
}
