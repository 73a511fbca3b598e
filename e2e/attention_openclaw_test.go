package e2e

import (
	"database/sql"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

var status429 = regexp.MustCompile(`\b429\b`)

// TestAttentionErrorOpenClaw: what OpenClaw's `agent --local` shows of a
// model answering every request 429, under `lifeloop run --no-hooks` in a
// terminal. Its screen says so at each attempt (its log lines "API rate
// limit reached" and "transient same-model retry n/9"); its database's
// transcript keeps the prompt and nothing of the failed attempts; lifeloop
// has no attention source for it and shows none.
func TestAttentionErrorOpenClaw(t *testing.T) {
	skipShort(t)
	t.Parallel()
	mock := startMock(t, mockmodel.Config{Fail: mockmodel.Rate429})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	state := stateDir(t)
	started := time.Now()
	term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), "run", "--state-dir", state, "--no-hooks", "--",
		bin, "agent", "--local", "-m", "say hello"), 160, 50)
	defer endSafeTUI(t, env, term)
	for _, want := range []string{"API rate limit reached", "transient same-model retry 1/9", "transient same-model retry 2/9"} {
		if err := term.WaitFor(want, runTimeout); err != nil {
			t.Fatalf("openclaw agent --local against a model answering 429: %v", err)
		}
		t.Logf("%q on the screen %s after the launch, %d failed model requests", want, time.Since(started).Round(time.Millisecond), mock.Failed())
	}
	// OpenClaw's database keeps the prompt and no record of the failed
	// attempts: no assistant message, no error.
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: env.OpenClawDB()}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), "SELECT event_json FROM transcript_events ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	var user int
	for rows.Next() {
		var ev string
		if err := rows.Scan(&ev); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(ev, `"role":"user"`) {
			user++
		}
		// 429 as a number of its own: ids and timestamps hold the digits
		// by chance ("…-4290-…").
		if m := status429.FindString(ev); m != "" {
			t.Errorf("OpenClaw's transcript records the error (%q): %s", m, ev)
		}
		for _, s := range []string{"rate_limit", "rate limit", `"role":"assistant"`, "errorMessage"} {
			if strings.Contains(ev, s) {
				t.Errorf("OpenClaw's transcript records the error (%q): %s", s, ev)
			}
		}
	}
	rows.Close()
	if user != 1 {
		t.Errorf("OpenClaw's transcript has %d user messages, want the prompt", user)
	}

	// lifeloop claims nothing for it: no attention in status.
	ses, _ := onlySession(t, state)
	var st struct {
		Attention *attentionJSON `json:"attention"`
	}
	llJSON(t, env, &st, "status", "--state-dir", state, "--json", ses)
	if st.Attention != nil {
		t.Errorf("status attention %+v: no source for OpenClaw is claimed", *st.Attention)
	}
}
