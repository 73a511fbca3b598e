package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// placedText renders a transport envelope whose body has the characters
// that need escaping on a command line and in TOML (quotes, backslash,
// newline, tab, non-ASCII), plus a marker unique to the test.
func placedText(t *testing.T, marker string) string {
	t.Helper()
	body := "continue from step 3 \"quoted\" back\\slash\nline two\ttab é " + marker
	p := contract.PayloadEnvelope{
		SchemaVersion: contract.PayloadSchemaVersion, PayloadID: "pay_launch", ClientID: "e2e", PayloadKind: "continuation",
		Format: "text/plain", ContentEncoding: contract.EncodingUTF8, Body: &body, ByteSize: uint64(len(body)),
		AcceptablePlacements: []contract.AcceptablePlacement{{Placement: contract.PlacementDeveloperEquivalentFrame, Requirement: contract.RequirementRequired}},
	}
	text, err := contract.RenderTransport([]contract.PayloadEnvelope{p})
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}

// requestCarries reports whether some string inside the JSON body of a
// model request contains text verbatim (after JSON decoding), and where.
func requestCarries(t *testing.T, body []byte, text string) (string, bool) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("model request is not JSON: %v", err)
	}
	var walk func(path string, v any) (string, bool)
	walk = func(path string, v any) (string, bool) {
		switch x := v.(type) {
		case string:
			return path, strings.Contains(x, text)
		case []any:
			for i, e := range x {
				if p, ok := walk(path+"["+strconv.Itoa(i)+"]", e); ok {
					return p, true
				}
			}
		case map[string]any:
			for k, e := range x {
				if p, ok := walk(path+"."+k, e); ok {
					return p, true
				}
			}
		}
		return "", false
	}
	return walk("", v)
}

func anyRequestCarries(t *testing.T, reqs []mockmodel.Request, text string) (string, bool) {
	t.Helper()
	for _, r := range reqs {
		if p, ok := requestCarries(t, r.Body, text); ok {
			return p, true
		}
	}
	return "", false
}

// TestLaunchPlacementReachesModel proves adapters.PlaceAtLaunch with the
// real binaries: the placed transport envelope reaches the model request
// verbatim, at the system/developer level — for `claude -p` (system
// prompt), the interactive Claude TUI, and `codex exec` (a developer
// message). A control run without placement proves the check can fail.
func TestLaunchPlacementReachesModel(t *testing.T) {
	skipShort(t)
	tests := []struct {
		name    string
		adapter string
		argv    func(bin string) []string
		kind    string
		tui     bool
		// wantPath is a prefix of where the text must be found in the
		// request (system-level for Claude, a developer message for Codex).
		wantPath *regexp.Regexp
	}{
		{"claude -p", "claude", func(bin string) []string { return []string{bin, "-p", "say hello"} }, "claude", false, regexp.MustCompile(`^\.system`)},
		{"claude interactive", "claude", func(bin string) []string { return []string{bin} }, "claude", true, regexp.MustCompile(`^\.system`)},
		{"codex exec", "codex", func(bin string) []string {
			return []string{bin, "exec", "--skip-git-repo-check", "say hello"}
		}, "codex", false, regexp.MustCompile(`^\.input\[\d+\]`)},
	}
	for _, tc := range tests {
		for _, placed := range []bool{true, false} {
			name := tc.name
			if !placed {
				name += " control"
			}
			t.Run(name, func(t *testing.T) {
				bin := testharness.ClaudeBin(t)
				if tc.adapter == "codex" {
					bin = testharness.CodexBin(t)
				}
				a, err := builtin.Default().Lookup(tc.adapter)
				if err != nil {
					t.Fatal(err)
				}
				const reply = "Reply from the mock."
				mock := startMock(t, mockmodel.Config{Reply: reply})
				env := testharness.NewHarnessEnv(t, mock)
				text := placedText(t, "marker-"+tc.adapter+"-7f3a")
				argv := a.PrepareLaunch(tc.argv(bin))
				if placed {
					var target contract.ManifestPlacementClass
					var ok bool
					argv, target, ok = a.PlaceAtLaunch(argv, text)
					if !ok || target != contract.ManifestPreSession {
						t.Fatalf("PlaceAtLaunch: ok %v target %q", ok, target)
					}
				}
				if tc.tui {
					runClaudeTUITurn(t, env, argv, reply)
				} else {
					res := env.Run(runTimeout, argv[0], argv[1:]...)
					if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
						t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s", tc.name, res.ExitCode, res.Stdout, res.Stderr)
					}
				}
				reqs := mock.RequestsOfKind(tc.kind)
				if len(reqs) == 0 {
					t.Fatal("the mock saw no conversation request")
				}
				path, found := anyRequestCarries(t, reqs, text)
				if found != placed {
					t.Fatalf("placed %v, text found in a model request: %v", placed, found)
				}
				if placed && !tc.wantPath.MatchString(path) {
					t.Errorf("text found at %s, want a system/developer position matching %s", path, tc.wantPath)
				}
				if placed && tc.adapter == "codex" {
					assertCodexDeveloperRole(t, reqs, text)
				}
			})
		}
	}
}

// assertCodexDeveloperRole checks that the input item carrying text is a
// developer message, not the user's prompt.
func assertCodexDeveloperRole(t *testing.T, reqs []mockmodel.Request, text string) {
	t.Helper()
	for _, r := range reqs {
		var body struct {
			Input []map[string]any `json:"input"`
		}
		if err := json.Unmarshal(r.Body, &body); err != nil {
			t.Fatal(err)
		}
		for _, item := range body.Input {
			raw, _ := json.Marshal(item)
			if _, ok := requestCarries(t, raw, text); ok {
				if item["role"] != "developer" {
					t.Errorf("text carried by an input item with role %v, want developer", item["role"])
				}
				return
			}
		}
	}
	t.Error("no input item carries the text")
}

// runClaudeTUITurn runs one turn in the interactive Claude TUI and exits
// with /exit.
func runClaudeTUITurn(t *testing.T, env *testharness.HarnessEnv, argv []string, reply string) {
	t.Helper()
	term := testharness.StartTerminal(t, env.Command(argv[0], argv[1:]...), 120, 40)
	testharness.ClaudeScreenReady(t, term, 0)
	term.Type("hello from the test")
	if err := term.WaitFor("hello from the test", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	if err := term.WaitFor(reply, screenTimeout); err != nil {
		t.Fatal(err)
	}
	env.ClaudeTranscriptTurnsEnded(t, term, 1)
	testharness.ClaudeExit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("claude TUI: code %d signal %v err %v", code, sig, err)
	}
}

// TestRelaunchResumesConversation proves adapters.RelaunchArgv with the
// real binaries: after a first one-shot turn, the relaunch command line
// (resume with the harness session id, plus a placed payload) continues
// the same conversation — the second run's model request carries the
// first prompt — and delivers the payload.
func TestRelaunchResumesConversation(t *testing.T) {
	skipShort(t)
	tests := []struct {
		adapter string
		argv    func(bin string) []string
		kind    string
		id      func(t *testing.T, env *testharness.HarnessEnv) string
	}{
		{"claude", func(bin string) []string { return []string{bin, "-p", "first prompt 41c2"} }, "claude",
			func(t *testing.T, env *testharness.HarnessEnv) string {
				ts := env.ClaudeTranscripts()
				if len(ts) != 1 {
					t.Fatalf("transcripts %v", ts)
				}
				return strings.TrimSuffix(ts[0][strings.LastIndex(ts[0], "/")+1:], ".jsonl")
			}},
		{"codex", func(bin string) []string {
			return []string{bin, "exec", "--skip-git-repo-check", "first prompt 41c2"}
		}, "codex",
			func(t *testing.T, env *testharness.HarnessEnv) string {
				rs := env.CodexRollouts()
				if len(rs) != 1 {
					t.Fatalf("rollouts %v", rs)
				}
				m := regexp.MustCompile(`([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$`).FindStringSubmatch(rs[0])
				if m == nil {
					t.Fatalf("no thread id in %s", rs[0])
				}
				return m[1]
			}},
	}
	for _, tc := range tests {
		t.Run(tc.adapter, func(t *testing.T) {
			bin := testharness.ClaudeBin(t)
			if tc.adapter == "codex" {
				bin = testharness.CodexBin(t)
			}
			a, err := builtin.Default().Lookup(tc.adapter)
			if err != nil {
				t.Fatal(err)
			}
			const reply = "Reply from the mock."
			mock := startMock(t, mockmodel.Config{Reply: reply})
			env := testharness.NewHarnessEnv(t, mock)
			first := tc.argv(bin)
			if res := env.Run(runTimeout, first[0], first[1:]...); res.ExitCode != 0 {
				t.Fatalf("first run: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			id := tc.id(t, env)
			n := len(mock.RequestsOfKind(tc.kind))

			relaunch, ok := a.RelaunchArgv(first, id, true)
			if !ok {
				t.Fatalf("RelaunchArgv(%q) not ok", first)
			}
			// The placement depends on facts about the harness (Claude
			// 2.1.330 and later resume with the recorded system prompt
			// unless told otherwise): read as the supervisor reads them.
			a = a.WithFacts(a.ReadFacts(t.Context(), relaunch, env.Env()))
			text := placedText(t, "marker-relaunch-"+tc.adapter)
			// A resumed Codex thread's only placement is its prompt, in
			// argv: opted in (TestNoPayloadBodyInArgv checks the refusal).
			argv, _, ok := a.WithArgvPayloads().PlaceAtLaunch(a.PrepareLaunch(relaunch), text)
			if !ok {
				t.Fatalf("PlaceAtLaunch(%q) not ok", relaunch)
			}
			if res := env.Run(runTimeout, argv[0], argv[1:]...); res.ExitCode != 0 {
				t.Fatalf("relaunch %q: exit %d\n%s\n%s", relaunch, res.ExitCode, res.Stdout, res.Stderr)
			}
			later := mock.RequestsOfKind(tc.kind)[n:]
			if len(later) == 0 {
				t.Fatal("the relaunch made no model request")
			}
			if _, ok := anyRequestCarries(t, later, "first prompt 41c2"); !ok {
				t.Error("the relaunch's request does not carry the first conversation: not resumed")
			}
			if _, ok := anyRequestCarries(t, later, text); !ok {
				t.Error("the relaunch's request does not carry the placed payload")
				for _, r := range later {
					t.Logf("argv %q\nrequest: %.3000s", argv, r.Body)
				}
			}
		})
	}
}

// waitOutputAfter waits until the terminal's output past byte n contains
// s (or s with whitespace removed). The timeout is a safety net against a
// hung harness, not a timing assertion.
func waitOutputAfter(t testing.TB, term *testharness.Terminal, n int, s string, timeout time.Duration) {
	t.Helper()
	if !outputAfter(term, n, s, timeout) {
		t.Fatalf("no %q in the output after byte %d; last output:\n%s", s, n, tailText(term.Output(), 2000))
	}
}

// writePayloadFile writes a payload envelope file with body and one
// required placement.
func writePayloadFile(t *testing.T, id, body string, placement contract.PlacementClass) string {
	t.Helper()
	p := contract.PayloadEnvelope{
		SchemaVersion: contract.PayloadSchemaVersion, PayloadID: id, ClientID: "e2e", PayloadKind: "continuation", Format: "text/plain",
		ContentEncoding: contract.EncodingUTF8, Body: &body, ByteSize: uint64(len(body)),
		ContentDigest:        contract.Ptr(contract.Digest([]byte(body))),
		AcceptablePlacements: []contract.AcceptablePlacement{{Placement: placement, Requirement: contract.RequirementRequired}},
	}
	raw, _ := json.Marshal(p)
	path := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkRenewalRecords checks what one renewal left behind once the
// wrapped session ended: the renewal's four receipts in order, exactly one
// delivered payload receipt, no body in the ledger or in any command's
// output, an empty continuation store and a delivered status.
func checkRenewalRecords(t *testing.T, env *testharness.HarnessEnv, ll, state, ses, payloadID string, placement contract.PlacementClass, secret string) {
	t.Helper()
	_, receipts := onlySession(t, state)
	// The renewal's own receipts carry renewal_step (the hook bridge adds
	// Claude's native SessionStart/SessionEnd moments besides them).
	var steps []string
	for _, r := range receipts {
		if step, ok := dig(r, "telemetry_summary", "renewal_step").(string); ok {
			steps = append(steps, r["event"].(string)+"/"+step)
		}
	}
	if want := "session.ending/ending session.ended/ended session.starting/starting session.started/started"; strings.Join(steps, " ") != want {
		t.Errorf("renewal receipts %v, want %s", steps, want)
	}
	// The loop serves hooks during a renewal: the SessionEnd hook the exit
	// command fires reaches the wrapper (no failed host-hook receipt).
	for _, r := range receipts {
		if hookCallFailed(r) {
			t.Errorf("a hook call failed to reach the wrapper: %v", r["warnings"])
		}
	}
	if last := lastOf(receipts, "session.ended"); dig(last, "telemetry_summary", "renewal_step") != nil {
		t.Errorf("the session's last session.ended is the renewal's, not the final exit: %v", eventsOf(receipts))
	}
	var delivered bool
	for _, r := range receipts {
		if r["event"] != "session.started" {
			continue
		}
		prs, _ := r["payload_receipts"].([]any)
		for _, pr := range prs {
			m := pr.(map[string]any)
			if m["payload_id"] == payloadID && m["status"] == "delivered" && m["placement"] == string(placement) {
				if delivered {
					t.Errorf("%s has more than one delivered receipt", payloadID)
				}
				delivered = true
			}
		}
	}
	if !delivered {
		t.Errorf("no session.started receipt with a delivered %s payload receipt", payloadID)
	}
	ledger, _ := os.ReadFile(filepath.Join(state, "sessions", ses, "receipts.jsonl"))
	if strings.Contains(string(ledger), secret) {
		t.Error("the ledger carries the payload body")
	}
	if left, _ := filepath.Glob(filepath.Join(state, "sessions", ses, "continuation", "*")); len(left) != 0 {
		t.Errorf("continuation store not empty after delivery: %v", left)
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(filepath.Join(state, "sessions", ses)))
	if err != nil || st.State != renewal.StateDelivered || st.Attempt != 1 || st.PayloadPending {
		t.Errorf("renewal status %+v, %v", st, err)
	}
	for _, args := range [][]string{{"sessions", "--state-dir", state}, {"status", "--state-dir", state, ses}, {"renewal", "status", "--state-dir", state, ses}} {
		out := env.Run(runTimeout, ll, args...)
		if strings.Contains(out.Stdout+out.Stderr, secret) {
			t.Errorf("`lifeloop %s` prints the payload body: %s", strings.Join(args, " "), out.Stdout)
		}
	}
}

// claudeTUIAfterOneTurn starts `lifeloop run -- claude` in a PTY, has
// one prompt answered, and returns the lifeloop session id too.
func claudeTUIAfterOneTurn(t *testing.T, reply, prompt string) (*testharness.Terminal, *testharness.HarnessEnv, string, string) {
	t.Helper()
	term, env, state := startClaudeTUIUnderLifeloop(t, reply)
	term.Type(prompt)
	if err := term.WaitFor(prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	testharness.ClaudeTurnsEnded(t, term, state, 1)
	sessions, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
	if len(sessions) != 1 {
		t.Fatalf("sessions %v", sessions)
	}
	return term, env, state, filepath.Base(sessions[0])
}

// TestRenewClaudeTUIUnderLifeloop renews a real interactive Claude
// session wrapped by `lifeloop run`: after a first turn, `lifeloop renew
// --resume --payload FILE` stops Claude (/exit), starts it again on the
// same terminal resuming the conversation with the payload placed at
// launch, and the next model request carries both the first turn and the
// payload. The ledger records ending, ended, starting and started (with a
// delivered payload receipt); the continuation store is empty afterwards
// and the renewal status is delivered.
func TestRenewClaudeTUIUnderLifeloop(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	const reply = "Interactive reply through lifeloop."
	term, env, state, ses := claudeTUIAfterOneTurn(t, reply, "first prompt 41c2")
	const secret = "RENEWAL-PAYLOAD-5c1d continue with step 2"
	payloadFile := writePayloadFile(t, "pay_renew", secret, contract.PlacementDeveloperEquivalentFrame)
	before := len(term.Output())
	n := len(env.Mock.RequestsOfKind("claude"))
	res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--resume", "--reason", "e2e", "--payload", payloadFile, ses)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
		t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
	}
	if strings.Contains(res.Stdout+res.Stderr, secret) {
		t.Error("renew printed the payload body")
	}
	testharness.ClaudeStarted(t, term, state, 2)
	term.Type("second prompt 9d1e")
	waitOutputAfter(t, term, before, "second prompt 9d1e", screenTimeout)
	submitted := len(term.Output())
	term.Type("\r")
	// The resumed TUI shows the first reply again, so wait for the
	// request at the mock, then for the reply drawn after the submit.
	var turn []mockmodel.Request
	deadline := time.Now().Add(screenTimeout)
	for len(turn) == 0 {
		for _, r := range env.Mock.RequestsOfKind("claude")[n:] {
			if strings.Contains(string(r.Body), "second prompt 9d1e") {
				turn = append(turn, r)
			}
		}
		if len(turn) == 0 && (time.Now().After(deadline) || term.Exited()) {
			t.Fatalf("no model request for the second prompt; terminal:\n%s", term.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	waitOutputAfter(t, term, submitted, reply, screenTimeout)
	if path, ok := requestCarries(t, turn[0].Body, secret); !ok || !strings.HasPrefix(path, ".system") {
		t.Errorf("payload in the renewed session's request: %v at %q, want in the system prompt", ok, path)
	}
	if _, ok := requestCarries(t, turn[0].Body, "first prompt 41c2"); !ok {
		t.Error("the renewed session did not resume the conversation")
	}

	testharness.ClaudeExit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v)", code, sig, err)
	}

	checkRenewalRecords(t, env, ll, state, ses, "pay_renew", contract.PlacementDeveloperEquivalentFrame, secret)
	assertNoProcessLeft(t, env, term.Pid())
	// Telemetry followed the resumed session (Claude appends to the same
	// transcript): the two prompts are two frames, each opened by its
	// hook, and the resumed session's turn is answered per the transcript;
	// the typed /exit is no frame.
	_, receipts := onlySession(t, state)
	assertFramesOnce(t, receipts)
	var openings []string
	opened := map[string]bool{}
	for _, r := range receipts {
		switch r["event"] {
		case "frame.opening":
			openings = append(openings, frameOfReceipt(r))
		case "frame.opened":
			opened[frameOfReceipt(r)] = true
		}
	}
	if len(openings) != 2 || !opened[openings[1]] {
		t.Errorf("frames opening %v, opened %v; want the two prompts, the resumed one answered; receipts:\n%s", openings, opened, receiptLines(receipts))
	} else if !opened[openings[0]] {
		// Seen once in ~30 runs, not reproduced: the first turn's answer
		// not in the ledger when Claude is stopped right after it.
		t.Logf("the first turn's frame.opened is missing; receipts:\n%s\ntranscripts:\n%s", receiptLines(receipts), transcriptLines(env))
	}
}

// TestRenewCodexTUIUnderLifeloop renews a real interactive Codex session
// wrapped by `lifeloop run`, both ways:
//
//   - resume: Codex ignores developer instructions on a resumed thread, so
//     the payload (pre_prompt_frame) becomes the first prompt of `codex
//     resume ID`, which the TUI submits at once; the request carries the
//     first turn and the payload as a user message. That prompt is in
//     argv, so this session runs with --payload-argv-ok.
//   - fresh: the payload (developer_equivalent_frame) goes into
//     developer_instructions through a profile file in CODEX_HOME (-p
//     NAME); the next turn's request carries it as a developer message
//     and not the first turn, and the file is gone after the session.
//
// A poller reads every process's /proc/PID/cmdline from the renewal to
// the end: the payload is never there when fresh, and is there in the
// opted-in resume (the poller's control).
func TestRenewCodexTUIUnderLifeloop(t *testing.T) {
	skipShort(t)
	tests := []struct {
		name      string
		resume    bool
		placement contract.PlacementClass
		role      string
	}{
		{"resume", true, contract.PlacementPrePromptFrame, "user"},
		{"fresh", false, contract.PlacementDeveloperEquivalentFrame, "developer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := testharness.CodexBin(t)
			ll := lifeloopBin(t)
			const reply = "Interactive reply through lifeloop."
			mock := startMock(t, mockmodel.Config{Reply: reply})
			env := testharness.NewHarnessEnv(t, mock)
			state := stateDir(t)
			// A resumed thread's only placement is its prompt, in argv: that
			// session opts in. The fresh one goes through a profile file.
			run := []string{"run", "--state-dir", state, "--", bin}
			if tc.resume {
				run = []string{"run", "--state-dir", state, "--payload-argv-ok", "--", bin}
			}
			term := testharness.StartTerminal(t, env.Command(ll, run...), 120, 40)
			testharness.CodexScreenReady(t, term, 0)
			term.Type("first prompt 41c2")
			if err := term.WaitFor("first prompt 41c2", screenTimeout); err != nil {
				t.Fatal(err)
			}
			term.Type("\r")
			testharness.CodexTurnsEnded(t, term, state, 1)
			sessions, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
			if len(sessions) != 1 {
				t.Fatalf("sessions %v", sessions)
			}
			ses := filepath.Base(sessions[0])
			secret := "RENEWAL-PAYLOAD-codex-" + tc.name
			payloadFile := writePayloadFile(t, "pay_renew", secret, tc.placement)
			n := len(mock.RequestsOfKind("codex"))
			mode := "--fresh"
			if tc.resume {
				mode = "--resume"
			}
			before := len(term.Output())
			// Every process's command line, from the renewal to the end.
			watch := watchCmdlines(secret)
			// The harness session id comes from the rollout the telemetry
			// watcher follows; a renew before it is known is refused with
			// identity_unavailable, so retry until it is known.
			var res testharness.Result
			deadline := time.Now().Add(screenTimeout)
			for {
				res = env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--payload", payloadFile, ses)
				if res.ExitCode == 0 || !strings.Contains(res.Stderr, "identity_unavailable") || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			if !tc.resume {
				testharness.CodexRelaunched(t, term, before)
				term.Type("second prompt 9d1e")
				waitOutputAfter(t, term, before, "second prompt 9d1e", screenTimeout)
				term.Type("\r")
			}
			var turn *mockmodel.Request
			deadline = time.Now().Add(screenTimeout)
			for turn == nil {
				for _, r := range mock.RequestsOfKind("codex")[n:] {
					if _, ok := requestCarries(t, r.Body, secret); ok {
						turn = &r
						break
					}
				}
				if turn == nil && (time.Now().After(deadline) || term.Exited()) {
					t.Fatalf("no model request carries the payload after the renewal; terminal:\n%s", term.Output())
				}
				time.Sleep(100 * time.Millisecond)
			}
			var body struct {
				Input []map[string]any `json:"input"`
			}
			if err := json.Unmarshal(turn.Body, &body); err != nil {
				t.Fatal(err)
			}
			for _, item := range body.Input {
				raw, _ := json.Marshal(item)
				if _, ok := requestCarries(t, raw, secret); ok && item["role"] != tc.role {
					t.Errorf("payload carried with role %v, want %s", item["role"], tc.role)
				}
			}
			if _, resumed := requestCarries(t, turn.Body, "first prompt 41c2"); resumed != tc.resume {
				t.Errorf("request carries the first turn: %v, want %v", resumed, tc.resume)
			}
			// The renewed session's turn ends: the second frame.ended.
			testharness.CodexTurnsEnded(t, term, state, 2)
			testharness.CodexQuit(t, term)
			if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
				t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output())
			}
			seen, scans := watch.stop()
			if inArgv := len(seen[secret]) > 0; inArgv != tc.resume {
				t.Errorf("payload in a process's command line: %v, want %v (only the opted-in resume puts it there; %d scans): %.300q", inArgv, tc.resume, scans, seen[secret])
			}
			checkRenewalRecords(t, env, ll, state, ses, "pay_renew", tc.placement, secret)
			if procs := env.StrayProcesses(); len(procs) > 0 {
				t.Errorf("codex processes left after lifeloop exited: %+v", procs)
			}
			if left, _ := filepath.Glob(filepath.Join(env.CodexHome, adapters.PlacementFilePrefix+"*")); len(left) > 0 {
				t.Errorf("launch placement files left in CODEX_HOME: %v", left)
			}
		})
	}
}

// TestRenewClaudeTUIFresh renews a real interactive Claude session into a
// new conversation (--fresh): the payload goes into the new session's
// system prompt, the first conversation is not carried over, and the
// transcript of the new session is followed — its own harness session id,
// its turn answered per the transcript.
func TestRenewClaudeTUIFresh(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	const reply = "Interactive reply through lifeloop."
	term, env, state, ses := claudeTUIAfterOneTurn(t, reply, "first prompt 7a3b")
	const secret = "FRESH-RENEWAL-PAYLOAD-2e8f"
	payloadFile := writePayloadFile(t, "pay_fresh", secret, contract.PlacementDeveloperEquivalentFrame)
	before := len(term.Output())
	n := len(env.Mock.RequestsOfKind("claude"))
	res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--fresh", "--payload", payloadFile, ses)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
		t.Fatalf("lifeloop renew --fresh: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
	}
	testharness.ClaudeStarted(t, term, state, 2)
	term.Type("second prompt 5f0c")
	waitOutputAfter(t, term, before, "second prompt 5f0c", screenTimeout)
	submitted := len(term.Output())
	term.Type("\r")
	waitOutputAfter(t, term, submitted, reply, screenTimeout)
	var turn []byte
	for _, r := range env.Mock.RequestsOfKind("claude")[n:] {
		if strings.Contains(string(r.Body), "second prompt 5f0c") {
			turn = r.Body
		}
	}
	if turn == nil {
		t.Fatal("no model request for the second prompt")
	}
	if path, ok := requestCarries(t, turn, secret); !ok || !strings.HasPrefix(path, ".system") {
		t.Errorf("payload in the fresh session's request: %v at %q, want in the system prompt", ok, path)
	}
	if _, ok := requestCarries(t, turn, "first prompt 7a3b"); ok {
		t.Error("the fresh session carries the first conversation")
	}
	// The payload reached Claude through a private file, not its command
	// line (which anyone may read in the process table).
	live, err := statedir.ReadSession(state, ses)
	if err != nil {
		t.Fatal(err)
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", live.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmdline), secret) || !strings.Contains(string(cmdline), "--append-system-prompt-file") {
		t.Errorf("the relaunched Claude's command line %q", strings.ReplaceAll(string(cmdline), "\x00", " "))
	}

	testharness.ClaudeExit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v)", code, sig, err)
	}
	checkRenewalRecords(t, env, ll, state, ses, "pay_fresh", contract.PlacementDeveloperEquivalentFrame, secret)
	assertNoProcessLeft(t, env, term.Pid())

	// Two Claude sessions, two transcripts; each turn's frame is opened
	// by its hook and answered per its own transcript, under its own
	// harness session id.
	transcripts := env.ClaudeTranscripts()
	if len(transcripts) != 2 {
		t.Fatalf("transcripts %v, want one per Claude session", transcripts)
	}
	rec, err := statedir.ReadSession(state, ses)
	if err != nil || len(rec.HarnessSessionIDs) != 2 {
		t.Fatalf("session.json harness session ids %v (%v), want two", rec.HarnessSessionIDs, err)
	}
	_, receipts := onlySession(t, state)
	assertFramesOnce(t, receipts)
	opened := map[string]string{} // frame → harness session id
	for _, r := range receipts {
		if r["event"] == "frame.opened" && dig(r, "telemetry_summary", "source") == "transcript" {
			opened[frameOfReceipt(r)] = fmt.Sprint(r["harness_session_id"])
		}
	}
	var openings []string
	for _, r := range receipts {
		if r["event"] == "frame.opening" {
			openings = append(openings, frameOfReceipt(r))
		}
	}
	if len(openings) != 2 {
		t.Fatalf("frame openings %v, want the two prompts; receipts:\n%s", openings, receiptLines(receipts))
	}
	// The new session's transcript is followed: its binding, under the
	// new harness session id.
	bound := false
	for _, r := range receipts {
		if r["event"] == "session.started" && dig(r, "telemetry_summary", "binding") == "harness_session_id" &&
			r["harness_session_id"] == rec.HarnessSessionIDs[1] {
			bound = true
		}
	}
	if !bound {
		t.Errorf("no transcript binding to the fresh session %s; receipts:\n%s", rec.HarnessSessionIDs[1], receiptLines(receipts))
	}
	for i, f := range openings {
		if sid, ok := opened[f]; ok && sid != rec.HarnessSessionIDs[i] {
			t.Errorf("turn %d answered under %q, want %s", i+1, sid, rec.HarnessSessionIDs[i])
		} else if !ok {
			t.Logf("turn %d's frame.opened is missing (see TestRenewClaudeTUIUnderLifeloop); receipts:\n%s\ntranscripts:\n%s", i+1, receiptLines(receipts), transcriptLines(env))
		}
	}
}

// transcriptLines renders the Claude transcripts' lines briefly: type,
// promptId, timestamp, model and stop reason.
func transcriptLines(env *testharness.HarnessEnv) string {
	var b strings.Builder
	for _, path := range env.ClaudeTranscripts() {
		fmt.Fprintf(&b, "%s\n", path)
		data, _ := os.ReadFile(path)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var v struct {
				Type      string `json:"type"`
				PromptID  string `json:"promptId"`
				Timestamp string `json:"timestamp"`
				IsMeta    bool   `json:"isMeta"`
				Message   struct {
					Model      string `json:"model"`
					StopReason string `json:"stop_reason"`
				} `json:"message"`
			}
			_ = json.Unmarshal([]byte(l), &v)
			fmt.Fprintf(&b, "  %s %s %s meta=%v %s %s (%d bytes)\n", v.Type, v.PromptID, v.Timestamp, v.IsMeta, v.Message.Model, v.Message.StopReason, len(l))
		}
	}
	return b.String()
}

// receiptLines renders receipts one per line: event, source, event id.
func receiptLines(receipts []map[string]any) string {
	var b strings.Builder
	for _, r := range receipts {
		fmt.Fprintf(&b, "%v %v %v %v\n", r["sequence"], r["event"], dig(r, "telemetry_summary", "source"), r["event_id"])
	}
	return b.String()
}
