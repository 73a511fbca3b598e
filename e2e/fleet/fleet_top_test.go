package fleet

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fleetRow is what the test reads of `top --fleet --json`.
type fleetRow struct {
	Machine string `json:"machine"`
	Session string `json:"session_id"`
	Harness string `json:"harness"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
	Closed  bool   `json:"closed"`
	Stale   bool   `json:"stale"`
	Gaps    uint64 `json:"gaps"`
}

// machine is one simulated machine: its own state folder and name,
// publishing to the fleet's exchange (and, so that nothing is missed
// before the view first runs, declaring the view's queue too).
func (f *fleet) machine(name string) *fleet {
	m := *f
	m.state = filepath.Join(f.dir, "machines", name)
	if err := os.MkdirAll(m.state, 0o700); err != nil {
		f.t.Fatal(err)
	}
	m.env = append(append([]string{}, f.env...), "LIFELOOP_STATE_DIR="+m.state, "LIFELOOP_MACHINE="+name)
	return &m
}

// fleetTop runs `lifeloop top --fleet … --json` with the view's state in
// the fleet's own folder and returns its rows by machine.
func (f *fleet) fleetTop(extra ...string) map[string]fleetRow {
	f.t.Helper()
	var out bytes.Buffer
	args := append([]string{"top", "--fleet", broker.URL + "?exchange=" + f.exchange, "--queue", f.queue, "--json", "--wait", "10s"}, extra...)
	p := f.start(&out, args...)
	if err := p.wait(f.t, 60*time.Second); err != nil {
		f.t.Fatalf("top --fleet: %v\n%s", err, p.stderr.String())
	}
	var rows []fleetRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		f.t.Fatalf("top --fleet --json: %v\n%s", err, out.String())
	}
	byMachine := map[string]fleetRow{}
	for _, r := range rows {
		if _, dup := byMachine[r.Machine]; dup {
			f.t.Errorf("two sessions of machine %s: %+v", r.Machine, rows)
		}
		byMachine[r.Machine] = r
	}
	return byMachine
}

// TestFleetTop: three machines publish to one broker — a session that
// finished, one still running, one aborted — and `lifeloop top --fleet`
// lists each on its machine in its seed 001 state; started again, the
// view rebuilds the same rows from what it kept (the queue is empty by
// then), and a machine silent for longer than --stale is shown stale.
func TestFleetTop(t *testing.T) {
	skipShort(t)
	f := newFleet(t)
	m1, m2, m3 := f.machine("m1"), f.machine("m2"), f.machine("m3")

	done := m1.run(io.Discard, frames(1, "0"))
	if err := done.wait(t, 60*time.Second); err != nil {
		t.Fatalf("m1's session: %v\n%s", err, done.stderr.String())
	}
	release := filepath.Join(f.dir, "release")
	running := m2.run(io.Discard, framesUntil(release, 0, "0.2"))
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600) })
	aborted := m3.run(io.Discard, "echo ready; sleep 300")
	waitSession(t, m2)
	id3 := waitSession(t, m3)
	ab := m3.start(io.Discard, "abort", id3)
	if err := ab.wait(t, 30*time.Second); err != nil {
		t.Fatalf("abort: %v\n%s", err, ab.stderr.String())
	}
	_ = aborted.wait(t, 30*time.Second)

	want := map[string]string{"m1": "COMPLETED", "m2": "RUNNING", "m3": "ABORTED"}
	var rows map[string]fleetRow
	for deadline := time.Now().Add(60 * time.Second); ; {
		rows = f.fleetTop()
		if agree(rows, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if !agree(rows, want) {
		t.Fatalf("fleet rows %+v, want states %v", rows, want)
	}
	for m, r := range rows {
		if r.Harness == "" || r.Session == "" || r.Gaps != 0 || r.Stale {
			t.Errorf("machine %s: %+v (want a harness, a session, no gap, not stale)", m, r)
		}
		if r.Closed != (m != "m2") {
			t.Errorf("machine %s: closed %v", m, r.Closed)
		}
	}
	if r := rows["m3"]; r.Reason != "abort" {
		t.Errorf("m3's reason %q, want abort (seed 001: RUNNING→ABORTING→ABORTED)", r.Reason)
	}

	// Started again with nothing new on the queue: the same rows.
	again := f.fleetTop("--stale", "1ns")
	for m, w := range want {
		if again[m].State != w || again[m].Session != rows[m].Session {
			t.Errorf("after a restart machine %s: %+v, want %s of %s", m, again[m], w, rows[m].Session)
		}
	}
	if !again["m2"].Stale || again["m1"].Stale {
		t.Errorf("with --stale 1ns the running session is stale and the ended ones are not: %+v", again)
	}

	_ = os.WriteFile(release, nil, 0o600)
	if err := running.wait(t, 60*time.Second); err != nil {
		t.Fatalf("m2's session: %v\n%s", err, running.stderr.String())
	}
}

// waitSession waits for the machine's one session to be recorded and
// returns its id.
func waitSession(t *testing.T, m *fleet) string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ids := m.sessions(); len(ids) == 1 {
			return ids[0]
		}
	}
	t.Fatalf("no session in %s", m.state)
	return ""
}

func agree(rows map[string]fleetRow, want map[string]string) bool {
	if len(rows) != len(want) {
		return false
	}
	for m, s := range want {
		if rows[m].State != s {
			return false
		}
	}
	return true
}
