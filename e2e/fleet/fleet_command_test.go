package fleet

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFleetCommands: a machine's `lifeloop serve` takes the commands
// for its sessions over the real broker. An abort signed with another
// secret is refused and recorded, and the session runs on; one signed
// with the machine's secret ends the session through its wrapper, and
// the fleet view shows it ABORTED for reason abort (seed 001: RUNNING →
// ABORTING → ABORTED); a command for a machine that never listened is
// answered at once.
func TestFleetCommands(t *testing.T) {
	skipShort(t)
	f := newFleet(t)
	m1 := f.machine("m1")
	m1.env = append(m1.env, "LIFELOOP_FLEET_SECRET=right")
	serve := m1.start(io.Discard, "serve", broker.URL)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(serve.stderr.String(), "taking commands"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lifeloop serve did not take commands: %s", serve.stderr.String())
		}
	}
	run := m1.run(io.Discard, "echo ready; sleep 300")
	id := waitSession(t, m1)

	caller := *f
	caller.env = append(append([]string{}, f.env...), "LIFELOOP_MACHINE=desk")
	command := func(secret string, args ...string) (string, string, error) {
		c := caller
		c.env = append(c.env, "LIFELOOP_FLEET_SECRET="+secret)
		var out bytes.Buffer
		p := c.start(&out, args...)
		err := p.wait(t, 60*time.Second)
		return out.String(), p.stderr.String(), err
	}

	_, stderr, err := command("wrong", "abort", "--fleet", broker.URL, "--machine", "m1", "--wait", "30s", id)
	if err == nil || !strings.Contains(stderr, "refused") || !strings.Contains(stderr, "signature") {
		t.Fatalf("an abort with the wrong secret: err %v, stderr %q (want refused: signature)", err, stderr)
	}
	log, _ := os.ReadFile(filepath.Join(m1.state, "fleet", "commands", "commands.jsonl"))
	if !strings.Contains(string(log), `"status":"refused"`) {
		t.Errorf("the refusal is not recorded: %q", log)
	}
	select {
	case err := <-run.done:
		run.done <- err
		t.Fatalf("the session ended after a refused abort: %v", err)
	default:
	}

	out, stderr, err := command("right", "abort", "--fleet", broker.URL, "--machine", "m1", "--wait", "30s", id)
	if err != nil {
		t.Fatalf("abort over the fleet: %v\n%s", err, stderr)
	}
	if !strings.Contains(out, id) || !strings.Contains(out, "machine m1") {
		t.Errorf("abort's answer %q", out)
	}
	_ = run.wait(t, 30*time.Second)
	var rows map[string]fleetRow
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if rows = f.fleetTop(); rows["m1"].State == "ABORTED" {
			break
		}
	}
	if r := rows["m1"]; r.State != "ABORTED" || r.Reason != "abort" || r.Session != id {
		t.Errorf("the fleet view after the abort: %+v, want %s ABORTED (abort)", r, id)
	}

	_, stderr, err = command("right", "pause", "--fleet", broker.URL, "--machine", "m9", "--wait", "30s", id)
	if err == nil || !strings.Contains(stderr, "no command queue") {
		t.Errorf("a command for a machine that never listened: err %v, stderr %q", err, stderr)
	}
	serve.stop(t)
}
