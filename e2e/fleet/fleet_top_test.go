package fleet

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/testharness"
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

var (
	topOnce sync.Once
	topErr  error
)

// topBin builds lifeloop-top beside lifeloop (once): `lifeloop top`
// hands its live view over to it.
func topBin(t *testing.T) {
	t.Helper()
	topOnce.Do(func() {
		root, err := testharness.FindModuleRoot()
		if err != nil {
			topErr = err
			return
		}
		build := exec.CommandContext(context.Background(), "go", "build", "-tags", testharness.BuildTags, "-o", filepath.Join(binDir, "lifeloop-top"), "./cmd/lifeloop-top")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			topErr = err
			t.Logf("%s", out)
		}
	})
	if topErr != nil {
		t.Fatalf("go build ./cmd/lifeloop-top: %v", topErr)
	}
}

// TestFleetTopLive runs the live `lifeloop top --fleet` in a real
// terminal over the real broker. Started on an empty queue, it shows a
// session started after it (the rows redraw as events come); p pauses
// and p resumes it on its machine through `lifeloop serve` (the answers
// shown, its HCP stream says PAUSED then RUNNING); r with a note file
// sends a renew with the note and shows the machine's answer (failed: a
// shell has no safe relaunch path); with the broker killed the title
// says it does not answer and the row stays; after the broker's restart
// the view is caught up again, and a then y aborts the session: the
// answer is shown, the session ends, and its HCP stream walks seed 001's
// transitions (hcp.CheckStream) to ABORTED for reason abort. q quits
// with 0.
func TestFleetTopLive(t *testing.T) {
	skipShort(t)
	topBin(t)
	f := newFleet(t)
	m1 := f.machine("m1")
	m1.env = append(m1.env, "LIFELOOP_FLEET_SECRET=right")
	serve := m1.start(io.Discard, "serve", broker.URL)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(serve.stderr.String(), "taking commands"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("lifeloop serve did not take commands: %s", serve.stderr.String())
		}
	}

	cmd := exec.Command(bin, "top", "--fleet", broker.URL+"?exchange="+f.exchange, "--queue", f.queue) //nolint:noctx // its process group is killed at cleanup
	cmd.Env = append(append([]string{}, f.env...), "LIFELOOP_FLEET_SECRET=right", "LIFELOOP_MACHINE=desk", "TERM=xterm-256color")
	cmd.Dir = f.dir
	view := testharness.StartTerminal(t, cmd, 200, 30)
	shows := func(what any) {
		t.Helper()
		if err := view.WaitFor(what, 90*time.Second); err != nil {
			t.Fatalf("the fleet view never showed %v: %v", what, err)
		}
	}
	shows("caught up")

	run := m1.run(io.Discard, "echo ready; sleep 300")
	id := waitSession(t, m1)
	short := id[:4] + id[len(id)-8:]
	shows(short)
	shows("m1")

	view.Type("p")
	shows(regexp.MustCompile(short + ` on m1: pause → \w+`))
	fleetStateIs(t, m1, id, hcp.StatePaused)
	shows("stopped") // the row: a paused session's activity
	view.Type("p")
	shows(regexp.MustCompile(`resume → \w+`)) // the renderer redraws the changed cells only
	fleetStateIs(t, m1, id, hcp.StateRunning)

	// r with a note file: a renew command with the note goes to m1 and
	// its answer is shown — failed: a generic shell has no safe relaunch
	// path (a real harness's renewal with a fleet note reaching the model
	// is e2e TestFleetRenewWithANote, through the same fleet.Send); the
	// listener records it without the note, and the session runs on.
	note := filepath.Join(f.dir, "note.md")
	if err := os.WriteFile(note, []byte("FLEET-VIEW-NOTE-3c9a: go on.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	view.Type("r")
	shows("note (text or markdown)")
	view.Type(note + "\r")
	shows("[f]resh or [r]esumed")
	view.Type("f")
	shows("renew on m1 failed: ")
	log, _ := os.ReadFile(filepath.Join(m1.state, "fleet", "commands", "commands.jsonl"))
	if !strings.Contains(string(log), `"op":"renew","status":"failed"`) || !strings.Contains(string(log), "no safe relaunch path") || strings.Contains(string(log), "FLEET-VIEW-NOTE") {
		t.Errorf("the commands log after r: %q (want the renew recorded, without its note)", log)
	}
	fleetStateIs(t, m1, id, hcp.StateRunning)

	broker.Kill(t)
	shows("broker not answering")
	// A resize redraws the whole screen: the row is still there.
	mark := len(view.Output())
	view.Resize(180, 30)
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(view.Output()[mark:], short); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("with the broker away the row is gone:\n%s", view.Output()[mark:])
		}
	}
	broker.Restart(t)
	before := strings.Count(view.Output(), "caught up")
	for deadline := time.Now().Add(120 * time.Second); strings.Count(view.Output(), "caught up") <= before; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the view did not come back after the broker's restart:\n%s", view.Output()[max(len(view.Output())-2000, 0):])
		}
	}
	// The listener reconnects with backoff; an abort may find it away
	// for a moment, and then says so: the key is pressed again.
	for deadline := time.Now().Add(90 * time.Second); ; {
		view.Type("a")
		shows("? y/N")
		view.Type("y")
		if err := view.WaitFor(regexp.MustCompile(`abort → \w+`), 30*time.Second); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the abort from the fleet view was never done:\n%s", view.Output()[max(len(view.Output())-2000, 0):])
		}
	}
	if err := run.wait(t, 60*time.Second); err == nil {
		t.Errorf("the aborted session's run exited 0")
	}
	var es []hcp.Envelope
	for _, l := range m1.replay(id) {
		e, err := hcp.Decode([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	if err := hcp.CheckStream(es); err != nil {
		t.Errorf("the aborted session's stream: %v", err)
	}
	var states []string
	for _, e := range es {
		if e.Payload.EventType == hcp.StateChanged {
			states = append(states, e.Payload.Data["to_state"].(string)+"/"+e.Payload.Data["reason"].(string))
		}
	}
	if n := len(states); n < 2 || states[n-2] != "ABORTING/abort" || states[n-1] != "ABORTED/abort" {
		t.Errorf("the aborted session's transitions %v, want … ABORTING/abort, ABORTED/abort", states)
	}
	log, _ = os.ReadFile(filepath.Join(m1.state, "fleet", "commands", "commands.jsonl"))
	if c := strings.Count(string(log), `"status":"done"`); c < 3 {
		t.Errorf("the listener recorded %d commands done, want pause, resume, abort:\n%s", c, log)
	}
	view.Type("q")
	code, sig, err := view.WaitTimeout(30 * time.Second)
	if err != nil || code != 0 || sig != 0 {
		t.Errorf("the fleet view's exit: %d %v %v", code, sig, err)
	}
	serve.stop(t)
}

// fleetStateIs waits until the machine's replay of session id (its HCP
// stream) has reached state.
func fleetStateIs(t *testing.T, m *fleet, id, state string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		ls := m.replay(id)
		if len(ls) > 0 {
			if e, err := hcp.Decode([]byte(ls[len(ls)-1])); err == nil && e.Payload.EventType == hcp.StateChanged && e.Payload.Data["to_state"] == state {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s never reached %s: %v", id, state, ls)
		}
	}
}

// TestFleetTopOnceCaughtUp: `top --fleet --json` on a queue with nothing
// in it prints at once the broker says the queue is read, not after
// --wait.
func TestFleetTopOnceCaughtUp(t *testing.T) {
	skipShort(t)
	f := newFleet(t)
	var out bytes.Buffer
	start := time.Now()
	p := f.start(&out, "top", "--fleet", broker.URL+"?exchange="+f.exchange, "--queue", f.queue, "--json", "--wait", "90s")
	if err := p.wait(t, 80*time.Second); err != nil {
		t.Fatalf("top --fleet --json: %v\n%s", err, p.stderr.String())
	}
	t.Logf("an empty queue read in %s (--wait 90s)", time.Since(start).Round(time.Millisecond))
	if strings.TrimSpace(out.String()) != "[]" {
		t.Errorf("rows of an empty queue: %q", out.String())
	}
}
