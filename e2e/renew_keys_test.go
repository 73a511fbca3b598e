package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestKeysTypedDuringResumeReachTheNewHarness: keys the person types
// while `lifeloop renew --resume` stops the harness and starts it again
// are held and handed to the new harness once it takes input, not when
// it names its session: the whole text typed during the renewal is the
// prompt the model then gets. Gemini CLI and OpenCode take input seconds
// after they start; keys released earlier were lost.
func TestKeysTypedDuringResumeReachTheNewHarness(t *testing.T) {
	skipShort(t)
	for _, tc := range safeTUIs {
		t.Run(tc.name, func(t *testing.T) {
			ll := lifeloopBin(t)
			mock := startMock(t, mockmodel.Config{Reply: "Answered."})
			env := testharness.NewHarnessEnv(t, mock)
			if tc.setup != nil {
				tc.setup(t, env)
			}
			state := stateDir(t)
			term := tc.start(t, env, state)
			term.Type("first prompt 41c2")
			if err := term.WaitFor("first prompt 41c2", screenTimeout); err != nil {
				t.Fatal(err)
			}
			tc.send(term)
			waitReceipt(t, term, state, "frame.ended", 1)
			ses, _ := onlySession(t, state)

			// The harness session id comes from its transcript; renew is
			// refused with identity_unavailable until it is known.
			statusPath := renewal.StatusPath(statedir.SessionDir(state, ses))
			var out bytes.Buffer
			var done chan error
			before := len(term.Output())
			for deadline := time.Now().Add(screenTimeout); ; time.Sleep(200 * time.Millisecond) {
				out.Reset()
				renew := env.Command(ll, "renew", "--state-dir", state, "--resume", ses)
				renew.Stdout, renew.Stderr = &out, &out
				if err := renew.Start(); err != nil {
					t.Fatal(err)
				}
				done = make(chan error, 1)
				go func() { done <- renew.Wait() }()
				if renewalStarted(statusPath, done) {
					break
				}
				if !strings.Contains(out.String(), "identity_unavailable") || time.Now().After(deadline) {
					t.Fatalf("the renewal never started: %s", out.String())
				}
			}
			const typed = "typed during the resume 5f2a"
			term.Type(typed)
			if err := <-done; err != nil {
				t.Fatalf("lifeloop renew: %v: %s", err, out.String())
			}
			n := len(mock.Requests())
			// Enter once the new harness shows the held keys in its
			// prompt: an Enter that comes with them in one burst reads as
			// a newline to some TUIs. (The text on screen alone proves
			// nothing: a terminal echoes keys a harness never reads; the
			// model request below does.)
			tc.relaunched(t, term, before)
			waitOutputAfter(t, term, before, typed, screenTimeout)
			tc.send(term)
			// A freshly resumed TUI may still drop that Enter on a loaded
			// machine (Gemini CLI once kept the text in its prompt for two
			// minutes): the text stays there, so Enter is pressed again
			// while no request carries it.
			sent := time.Now()
			for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
				if time.Since(sent) > 5*time.Second {
					tc.send(term)
					sent = time.Now()
				}
				found := false
				for _, r := range mock.Requests()[n:] {
					found = found || bytes.Contains(r.Body, []byte(typed))
				}
				if found {
					break
				}
				if time.Now().After(deadline) || term.Exited() {
					log, _ := os.ReadFile(filepath.Join(state, "sessions", ses, "lifeloop.log"))
					t.Fatalf("no model request carries the whole text typed during the renewal; terminal:\n%s\nlog:\n%s", term.Output(), log)
				}
			}
			endSafeTUI(t, env, term)
		})
	}
}

// renewalStarted waits until the renewal status at path is in progress
// (true) or the renew command has ended (false).
func renewalStarted(path string, done <-chan error) bool {
	for {
		if st, _ := renewal.ReadStatus(path); st.State.InProgress() {
			return true
		}
		select {
		case <-done:
			return false
		case <-time.After(5 * time.Millisecond):
		}
	}
}
