package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestRenewSaysWhatWasNotDelivered: a payload stored for the next
// renewal that a resumed Codex thread cannot take (it has no developer
// instructions at launch, and its prompt is in argv without the opt-in)
// is reported, not silently kept: `renew --resume` exits 1 naming it,
// its receipt says failed, `renewal status` says undelivered with the
// payload pending, and no model request carries it. The next, fresh
// renewal delivers it and says it was carried over from the earlier one.
func TestRenewSaysWhatWasNotDelivered(t *testing.T) {
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Interactive reply through lifeloop."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin), 120, 40)
	testharness.CodexScreenReady(t, term, 0)
	term.Type("first prompt 41c2")
	if err := term.WaitFor("first prompt 41c2", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	testharness.CodexTurnsEnded(t, term, state, 1)
	ses, _ := onlySession(t, state)

	const secret = "KEPT-PAYLOAD-3a7f"
	pf := writePayloadFile(t, "pay_kept", secret, contract.PlacementDeveloperEquivalentFrame)
	if res := env.Run(runTimeout, ll, "continuation", "put", "--state-dir", state, ses, pf); res.ExitCode != 0 {
		t.Fatalf("continuation put: %d %s", res.ExitCode, res.Stderr)
	}

	// The harness session id comes from the rollout; renew is refused
	// with identity_unavailable until the watcher has read it.
	before := len(term.Output())
	var res testharness.Result
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(200 * time.Millisecond) {
		res = env.Run(runTimeout, ll, "renew", "--state-dir", state, "--resume", ses)
		if !strings.Contains(res.Stderr, "identity_unavailable") || time.Now().After(deadline) {
			break
		}
	}
	if res.ExitCode != 1 || !strings.Contains(res.Stdout, "renewal undelivered") ||
		!strings.Contains(res.Stdout, "pay_kept: failed") || !strings.Contains(res.Stdout, "not delivered, kept") ||
		!strings.Contains(res.Stderr, "placement_unavailable: payloads pay_kept were not delivered") {
		t.Fatalf("renew --resume: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	status := env.Run(runTimeout, ll, "renewal", "status", "--json", "--state-dir", state, ses)
	var st renewal.Status
	if err := json.Unmarshal([]byte(status.Stdout), &st); err != nil {
		t.Fatalf("renewal status: %v\n%s", err, status.Stdout)
	}
	if st.State != renewal.StateUndelivered || !st.PayloadPending || strings.Join(st.UndeliveredIDs, ",") != "pay_kept" {
		t.Errorf("renewal status after the resume: %+v", st)
	}
	list := env.Run(runTimeout, ll, "continuation", "list", "--state-dir", state, ses)
	if !strings.Contains(list.Stdout, "attempt 1 (failed)") {
		t.Errorf("continuation list does not label the kept payload:\n%s", list.Stdout)
	}

	// The resumed Codex answers a prompt; no request carries the payload.
	testharness.CodexRelaunched(t, term, before)
	before = len(term.Output())
	n := len(mock.RequestsOfKind("codex"))
	term.Type("second prompt 9d1e")
	waitOutputAfter(t, term, before, "second prompt 9d1e", screenTimeout)
	term.Type("\r")
	testharness.CodexTurnsEnded(t, term, state, 2)
	for _, r := range mock.RequestsOfKind("codex")[n:] {
		if strings.Contains(string(r.Body), secret) {
			t.Fatal("a request of the resumed conversation carries the payload it was told it could not take")
		}
	}

	// A fresh renewal can place it: delivered, and said to be carried.
	before = len(term.Output())
	res = env.Run(runTimeout, ll, "renew", "--state-dir", state, "--fresh", ses)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") ||
		!strings.Contains(res.Stdout, "pay_kept: delivered") || !strings.Contains(res.Stdout, "left undelivered by an earlier renewal") {
		t.Fatalf("renew --fresh: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	testharness.CodexRelaunched(t, term, before)
	n = len(mock.RequestsOfKind("codex"))
	term.Type("third prompt 77c0")
	waitOutputAfter(t, term, before, "third prompt 77c0", screenTimeout)
	term.Type("\r")
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
		found := false
		for _, r := range mock.RequestsOfKind("codex")[n:] {
			found = found || strings.Contains(string(r.Body), secret)
		}
		if found {
			break
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("the fresh conversation's request does not carry the delivered payload; terminal:\n%s", term.Output())
		}
	}
	if list := env.Run(runTimeout, ll, "continuation", "list", "--state-dir", state, ses); !strings.Contains(list.Stdout, "no continuation payloads") {
		t.Errorf("the delivered payload is still stored:\n%s", list.Stdout)
	}
	_, rs := onlySession(t, state)
	started := receiptsFor(rs, "session.started")
	if last := started[len(started)-1]; dig(last, "telemetry_summary", "carried_payload_ids") == nil {
		t.Errorf("the delivering session.started does not name the carried payload: %v", last)
	}
	if files, _ := filepath.Glob(filepath.Join(state, "sessions", ses, "continuation", "*")); len(files) != 0 {
		t.Errorf("continuation files left: %v", files)
	}
	endSafeTUI(t, env, term)
}
