package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestFleetRenewWithANote: a real Claude session on machine m1, whose
// `lifeloop serve` takes commands from a real RabbitMQ broker, is renewed
// from another "machine" with `lifeloop renew --fleet URL --machine m1
// SESSION --note FILE --resume`: the note reaches the resumed
// conversation's next model request, and neither the caller's nor the
// listener's output holds it.
func TestFleetRenewWithANote(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	broker, err := rabbittest.New()
	if err != nil {
		t.Fatalf("the fleet tests need RabbitMQ (make broker): %v", err)
	}
	t.Cleanup(broker.Close)
	term, env, state, id := claudeTUIAfterOneTurn(t, "Reply before the fleet note.", "first prompt 51ac")
	env.Setenv("LIFELOOP_FLEET_SECRET", "fleet-secret-e2e")
	env.Setenv("LIFELOOP_MACHINE", "m1")
	env.Setenv("LIFELOOP_STATE_DIR", state)
	serve := env.Command(ll, "serve", broker.URL)
	var serveErr rabbittest.Buffer
	serve.Stderr = &serveErr
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-serve.Process.Pid, syscall.SIGKILL); _ = serve.Wait() })
	for deadline := time.Now().Add(runTimeout); !strings.Contains(serveErr.String(), "taking commands"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lifeloop serve did not take commands: %s", serveErr.String())
		}
	}

	const note = "# Handoff\n\nFLEET-NOTE-8d1e: go on with step 3.\n"
	if err := os.WriteFile(filepath.Join(env.Dir, "fleet-note.md"), []byte(note), 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(term.Output())
	n := len(env.Mock.RequestsOfKind("claude"))
	env.Setenv("LIFELOOP_MACHINE", "desk")
	env.Setenv("LIFELOOP_STATE_DIR", t.TempDir()) // the caller's own: the session is not there
	res := env.Run(runTimeout, ll, "renew", "--fleet", broker.URL, "--machine", "m1", "--note", "fleet-note.md", "--resume", id)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewed") || !strings.Contains(res.Stdout, "machine m1") {
		t.Fatalf("renew --fleet: exit %d\nstdout: %s\nstderr: %s\nserve: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, serveErr.String(), term.Output())
	}
	testharness.ClaudeStarted(t, term, state, 2)
	term.Type("second prompt 62bf")
	waitOutputAfter(t, term, before, "second prompt 62bf", screenTimeout)
	term.Type("\r")
	var turn []mockmodel.Request
	for deadline := time.Now().Add(screenTimeout); len(turn) == 0; time.Sleep(100 * time.Millisecond) {
		for _, r := range env.Mock.RequestsOfKind("claude")[n:] {
			if strings.Contains(string(r.Body), "second prompt 62bf") {
				turn = append(turn, r)
			}
		}
		if len(turn) == 0 && (time.Now().After(deadline) || term.Exited()) {
			t.Fatalf("no model request for the second prompt; terminal:\n%s", term.Output())
		}
	}
	if _, ok := requestCarries(t, turn[0].Body, "FLEET-NOTE-8d1e: go on with step 3"); !ok {
		t.Error("the resumed conversation's request does not carry the fleet note")
	}
	if _, ok := requestCarries(t, turn[0].Body, "first prompt 51ac"); !ok {
		t.Error("the renewed session did not resume the conversation")
	}
	if strings.Contains(res.Stdout+res.Stderr+serveErr.String(), "FLEET-NOTE-8d1e") {
		t.Error("the note is in the caller's or the listener's output")
	}
	log, _ := os.ReadFile(filepath.Join(state, "fleet", "commands", "commands.jsonl"))
	if !strings.Contains(string(log), `"op":"renew"`) || strings.Contains(string(log), "FLEET-NOTE") {
		t.Errorf("the commands log: %q (want the renew recorded, without its note)", log)
	}
	testharness.ClaudeExit(t, term)
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatal(err)
	}
}
