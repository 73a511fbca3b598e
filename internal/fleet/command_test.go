package fleet

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCommandHandledOnce: an authorized command is done once — the same
// id again gets the kept answer, marked a repeat, without a second call
// — and a command with no secret configured, a wrong signature, another
// machine's name or an unknown op is refused without a call; every one
// is recorded in the commands log.
func TestCommandHandledOnce(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	cfg := ListenerConfig{Machine: "m1", Secret: []byte("s"), Dir: dir, Now: func() time.Time { return time.Unix(1, 0) },
		Do: func(_ context.Context, c Command) (string, error) {
			calls++
			if c.Session == "ses_gone" {
				return "", errors.New("no session ses_gone on this machine")
			}
			return "aborted", nil
		}}
	if err := os.MkdirAll(filepath.Join(dir, "answers"), 0o700); err != nil {
		t.Fatal(err)
	}
	body := func(c Command, secret string) []byte {
		b, err := Seal(c, []byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ok := Command{ID: "c1", Machine: "m1", Session: "ses_A", Op: "abort"}
	if r := handled(t, cfg, body(ok, "s")); r.Status != ResultDone || r.State != "aborted" || r.Repeat {
		t.Fatalf("first: %+v", r)
	}
	if r := handled(t, cfg, body(ok, "s")); r.Status != ResultDone || !r.Repeat || calls != 1 {
		t.Fatalf("again: %+v after %d calls, want the kept answer and one call", r, calls)
	}
	gone := Command{ID: "c2", Machine: "m1", Session: "ses_gone", Op: "abort"}
	if r := handled(t, cfg, body(gone, "s")); r.Status != ResultFailed || !strings.Contains(r.Message, "no session") {
		t.Errorf("a session not there: %+v", r)
	}
	for name, b := range map[string][]byte{
		"wrong secret":    body(Command{ID: "c3", Machine: "m1", Session: "ses_A", Op: "abort"}, "x"),
		"another machine": body(Command{ID: "c4", Machine: "m2", Session: "ses_A", Op: "abort"}, "s"),
		"unknown op":      body(Command{ID: "c5", Machine: "m1", Session: "ses_A", Op: "delete"}, "s"),
		"bad id":          body(Command{ID: "../x", Machine: "m1", Session: "ses_A", Op: "abort"}, "s"),
		"not a command":   []byte(`{"hello":1}`),
	} {
		if r := handled(t, cfg, b); r.Status != ResultRefused {
			t.Errorf("%s: %+v, want refused", name, r)
		}
	}
	none := cfg
	none.Secret = nil
	if r := handled(t, none, body(Command{ID: "c6", Machine: "m1", Session: "ses_A", Op: "abort"}, "")); r.Status != ResultRefused || !strings.Contains(r.Message, "no fleet secret") {
		t.Errorf("no secret configured: %+v", r)
	}
	if calls != 2 {
		t.Errorf("%d calls, want 2 (refusals never act)", calls)
	}
	log, _ := os.ReadFile(filepath.Join(dir, CommandsLog))
	if n := strings.Count(string(log), "\n"); n != 9 {
		t.Errorf("%d lines in the commands log, want 9 (repeat included):\n%s", n, log)
	}
}

func handled(t *testing.T, cfg ListenerConfig, body []byte) Result {
	t.Helper()
	r, ok := handle(context.Background(), cfg, body)
	if !ok {
		t.Fatalf("handle with a live context reported a stop: %+v", r)
	}
	return r
}
