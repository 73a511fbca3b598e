package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/launcher"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// lifeloopBin builds bin/lifeloop once per test binary, into a temporary
// folder removed when the tests end.
func lifeloopBin(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "lifeloop-e2e-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "lifeloop")
		// lifeloop-hook, lifeloop-otlp and lifeloop-top beside lifeloop,
		// where `run` (its hook command), `run --otlp`, `export otlp` and
		// `top` look for them.
		// rusagerun, through which benchmarks measure a command
		// (measure). One go build for the five: it links them side by
		// side.
		pkgs := []string{"./cmd/lifeloop", "./cmd/lifeloop-hook", "./cmd/lifeloop-otlp", "./cmd/lifeloop-top", "./internal/testharness/cmd/rusagerun"}
		cmd := exec.CommandContext(context.Background(), "go", append([]string{"build", "-tags", testharness.BuildTags, "-o", buildDir}, pkgs...)...)
		cmd.Dir = testharness.ModuleRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = err
			t.Logf("go build %s: %s", strings.Join(pkgs, " "), out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building lifeloop: %v", buildErr)
	}
	return builtBin
}

// removeBuilt deletes what lifeloopBin built.
func removeBuilt() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// readJSONL parses every complete line of a JSONL file. Text after the
// last newline is a line still being written (a reader can see part of one
// write(2) on a regular file) and is left for the next read, as the
// ledger's own readers do.
func readJSONL(t testing.TB, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	var out []map[string]any
	for line := range bytes.Lines(b) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: bad line %.200q: %v", path, line, err)
		}
		out = append(out, m)
	}
	return out
}

// sessionLedgers returns every session's receipts under stateDir, keyed
// by session id, with its session.json.
func sessionLedgers(t testing.TB, stateDir string) map[string][]map[string]any {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*", "receipts.jsonl"))
	out := map[string][]map[string]any{}
	for _, p := range paths {
		out[filepath.Base(filepath.Dir(p))] = readJSONL(t, p)
	}
	return out
}

// onlySession returns the id and receipts of the only session under
// stateDir, failing the test if there is not exactly one.
func onlySession(t testing.TB, stateDir string) (string, []map[string]any) {
	t.Helper()
	ls := sessionLedgers(t, stateDir)
	if len(ls) != 1 {
		ids := make([]string, 0, len(ls))
		for id := range ls {
			ids = append(ids, id)
		}
		t.Fatalf("want one session ledger under %s, found %d: %v", stateDir, len(ls), ids)
	}
	for id, rs := range ls {
		return id, rs
	}
	return "", nil
}

// stateDir returns a fresh state folder for the test; when the test ends
// (and passed so far, not skipped), every session ledger in it must tell
// one coherent story (checkCoherent).
func stateDir(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	t.Cleanup(func() {
		if t.Failed() || t.Skipped() {
			// A skipped test may leave a session cut off mid-way (its
			// wrapper killed with the test's context): nothing to judge.
			return
		}
		for id, rs := range sessionLedgers(t, dir) {
			if err := checkCoherent(rs); err != nil {
				t.Errorf("session %s: the receipt stream is not coherent: %v\n%s", id, err, describeStream(rs))
			}
			if err := checkHCP(id, rs); err != nil {
				t.Errorf("session %s: the HCP stream breaks seed 001: %v\n%s", id, err, describeStream(rs))
			}
		}
	})
	return dir
}

// checkHCP projects a session's receipts into HCP events and checks them
// against seed 001's state machine (hcp.CheckStream).
func checkHCP(id string, rs []map[string]any) error {
	p := hcp.NewProjector(id)
	var es []hcp.Envelope
	for _, m := range rs {
		b, _ := json.Marshal(m)
		var r contract.LifecycleReceipt
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		es = append(es, p.Project(r)...)
	}
	return hcp.CheckStream(es)
}

// checkCoherent checks the stream guarantees of docs/contract.md on one
// session's receipts, in ledger order. A wrapped session's ledger is a
// sequence of harness sessions, each opened by session.starting: in each,
// exactly one session.started (none when the launch failed), at most one
// session.ending, exactly one session.ended, nothing of it after its
// session.ended, no frame before its session.started and none after its
// session.ending; a relaunch's
// session.starting links to the session before it. Per frame id (in any
// ledger): each frame stage at most once, in causal order.
func checkCoherent(rs []map[string]any) error {
	stage := map[string]int{"frame.opening": 1, "frame.opened": 2, "frame.ending": 3, "frame.ended": 4}
	frames := map[string]int{}
	for i, r := range rs {
		ev, _ := r["event"].(string)
		k := stage[ev]
		if k == 0 {
			continue
		}
		id := frameIDOf(r)
		if id == "" {
			continue
		}
		if frames[id] >= k {
			return fmt.Errorf("receipt %d: %s of frame %s after stage %d of it", i, ev, id, frames[id])
		}
		frames[id] = k
	}
	if len(rs) == 0 || rs[0]["integration_mode"] != "launcher_wrapper" {
		return nil
	}
	type segment struct{ starting, started, ending, ended int }
	var segs []segment
	var cur *segment
	var lastStarted string
	for i, r := range rs {
		ev, _ := r["event"].(string)
		if hookCallFailed(r) {
			continue // recorded by host-hook when the call could not reach the wrapper
		}
		if ev == "session.starting" {
			if cur != nil && cur.ended == 0 {
				return fmt.Errorf("receipt %d: session.starting before the harness session before it ended", i)
			}
			if dig(r, "telemetry_summary", "reason") == "renewal" && r["parent_receipt_id"] != lastStarted && lastStarted != "" {
				return fmt.Errorf("receipt %d: the relaunch's session.starting links to %v, not to the session.started before it (%s)", i, r["parent_receipt_id"], lastStarted)
			}
			segs = append(segs, segment{})
			cur = &segs[len(segs)-1]
		}
		if cur == nil {
			if strings.HasPrefix(ev, "session.") || strings.HasPrefix(ev, "frame.") {
				return fmt.Errorf("receipt %d: %s before any session.starting", i, ev)
			}
			continue
		}
		if cur.ended > 0 && ev != "session.starting" && (strings.HasPrefix(ev, "session.") || strings.HasPrefix(ev, "frame.")) {
			return fmt.Errorf("receipt %d: %s after session.ended", i, ev)
		}
		switch ev {
		case "session.starting":
			cur.starting++
		case "session.started":
			cur.started++
			lastStarted, _ = r["receipt_id"].(string)
		case "session.ending":
			cur.ending++
		case "session.ended":
			cur.ended++
			if cur.started == 0 && r["status"] != "failed" {
				return fmt.Errorf("receipt %d: session.ended of a harness session that never started is not failed", i)
			}
		default:
			if strings.HasPrefix(ev, "frame.") && cur.started == 0 {
				return fmt.Errorf("receipt %d: %s before session.started", i, ev)
			}
			if strings.HasPrefix(ev, "frame.") && cur.ending > 0 {
				return fmt.Errorf("receipt %d: %s after session.ending", i, ev)
			}
		}
	}
	for n, s := range segs {
		if s.started > 1 || s.ending > 1 || s.ended != 1 {
			return fmt.Errorf("harness session %d: %d session.started, %d session.ending, %d session.ended (want 1, at most 1, 1)", n+1, s.started, s.ending, s.ended)
		}
		if s.started == 0 && n == 0 && len(segs) > 1 {
			return fmt.Errorf("harness session %d never started but was renewed", n+1)
		}
	}
	return nil
}

// frameIDOf is the frame a receipt belongs to: telemetry_summary.frame_id,
// else its "<frame>/<event>" event id.
func frameIDOf(r map[string]any) string {
	if id, _ := dig(r, "telemetry_summary", "frame_id").(string); id != "" {
		return id
	}
	ev, _ := r["event"].(string)
	eid, _ := r["event_id"].(string)
	if id, ok := strings.CutSuffix(eid, "/"+ev); ok {
		return id
	}
	return ""
}

// hookCallFailed reports a failed receipt host-hook recorded for a hook
// call that never reached its wrapper.
func hookCallFailed(r map[string]any) bool {
	if r["status"] != "failed" {
		return false
	}
	ws, _ := r["warnings"].([]any)
	for _, w := range ws {
		if dig(w, "code") == launcher.HookFailedWarning {
			return true
		}
	}
	return false
}

// describeStream lists a ledger's events, one line each, for failures.
func describeStream(rs []map[string]any) string {
	var b strings.Builder
	for i, r := range rs {
		fmt.Fprintf(&b, "%3d %-28v %-9v frame=%v source=%v\n", i, r["event"], r["status"], frameIDOf(r), dig(r, "telemetry_summary", "source"))
	}
	return b.String()
}
