package e2e

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// placedText renders a transport envelope whose body has the characters
// that need escaping on a command line and in TOML (quotes, backslash,
// newline, tab, non-ASCII), plus a marker unique to the test.
func placedText(t *testing.T, marker string) string {
	t.Helper()
	body := "continue from step 3 \"quoted\" back\\slash\nline two\ttab é " + marker
	p := contract.PayloadEnvelope{
		SchemaVersion: 1, PayloadID: "pay_launch", ClientID: "e2e", PayloadKind: "continuation",
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
				a, err := adapters.Default().Lookup(tc.adapter)
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
	if err := term.WaitFor("? for shortcuts", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("hello from the test")
	if err := term.WaitFor("hello from the test", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	if err := term.WaitFor(reply, screenTimeout); err != nil {
		t.Fatal(err)
	}
	if err := term.WaitFor(regexp.MustCompile(`(?s)Reply.*for\s*shortcuts`), screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("/exit")
	_ = term.WaitFor(regexp.MustCompile(`/exit\s*(Exit|exit)`), screenTimeout)
	term.Type("\r")
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
			a, err := adapters.Default().Lookup(tc.adapter)
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
			text := placedText(t, "marker-relaunch-"+tc.adapter)
			argv, _, ok := a.PlaceAtLaunch(a.PrepareLaunch(relaunch), text)
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
