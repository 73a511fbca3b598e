package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// backgrounded is what `claude --bg` prints of the session it started:
// its short id.
var backgrounded = regexp.MustCompile(`backgrounded · ([0-9a-f]{8})`)

// topRows runs `lifeloop top --json` and returns its rows.
func topRows(t *testing.T, env *testharness.HarnessEnv, ll, state string) []map[string]any {
	t.Helper()
	res := env.Run(time.Minute, ll, "top", "--json", "--state-dir", state)
	var rows []map[string]any
	if res.ExitCode != 0 || json.Unmarshal([]byte(res.Stdout), &rows) != nil {
		t.Fatalf("top --json: rc %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	return rows
}

// rowsWith returns the rows whose id or harness session id is id.
func rowsWith(rows []map[string]any, id string) []map[string]any {
	var out []map[string]any
	for _, r := range rows {
		if r["id"] == id || r["harness_session_id"] == id {
			out = append(out, r)
		}
	}
	return out
}

// TestClaudeAgentsInTop: `lifeloop top --json` lists, read-only, the
// background sessions a person started with `claude --bg` outside
// lifeloop, from `claude agents --json`: Claude's short id, session id,
// pid (the process Claude's session registry names), state and folder,
// marked as not supervised (external.source "claude agents"), in the
// table and the live view too (whose keys do not act on them), and left
// out with --external=false. With no session, `claude agents --json` prints [] and starts no
// daemon, and top lists nothing. A stopped session leaves top, and
// changes Claude's files (the stamp on which the live view asks again).
// A session
// lifeloop's process wrapper records (host apply --process-wrapper) is
// listed once, as lifeloop's own row, though `claude agents` lists it
// too. A session waiting for a person — `claude --bg --permission-mode
// default` whose model asks for a command that needs a permission (a
// background session otherwise runs in Claude's auto mode, which ran the
// same call without asking) — is listed blocked, with Claude's status
// waiting and what it waits for ("permission prompt"), and the command
// did not run.
func TestClaudeAgentsInTop(t *testing.T) {
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "agents reply from the mock", ToolCommand: "touch made-without-asking"})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Cleanup(func() {
		// The test's context is over by now: a bound of its own.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		stop := exec.CommandContext(ctx, bin, "daemon", "stop", "--any")
		stop.Env, stop.Dir = env.Env(), env.Dir
		_ = stop.Run()
	})
	claudeDir := filepath.Join(env.Home, ".claude")

	// No session: `claude agents --json` prints [] and starts nothing;
	// top lists nothing (and runs no claude: the registry is empty).
	if res := env.Run(time.Minute, bin, "agents", "--json"); res.ExitCode != 0 || strings.TrimSpace(res.Stdout) != "[]" {
		t.Fatalf("claude agents --json with no daemon: rc %d: %q %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	for _, f := range []string{"daemon.log", "daemon.status.json"} {
		if _, err := os.Stat(filepath.Join(claudeDir, f)); err == nil {
			t.Errorf("claude agents --json with no daemon left %s: it started one", f)
		}
	}
	if rows := topRows(t, env, ll, state); len(rows) != 0 {
		t.Fatalf("top --json with no session: %v", rows)
	}

	// Two of a person's own.
	start := func(args ...string) string {
		res := env.Run(time.Minute, bin, append([]string{"--bg"}, args...)...)
		m := backgrounded.FindStringSubmatch(res.Stdout)
		if res.ExitCode != 0 || m == nil {
			t.Fatalf("claude --bg %q: rc %d: %s %s", args, res.ExitCode, res.Stdout, res.Stderr)
		}
		return m[1]
	}
	plain := start("say hi")
	other := start("say hi again")

	var raw string
	var row, orow map[string]any
	waitFor(t, "top rows for both, with their pids", func() bool {
		rows := topRows(t, env, ll, state)
		p, o := rowsWith(rows, plain), rowsWith(rows, other)
		// A job Claude has not yet given a process is listed without pid.
		if len(p) != 1 || len(o) != 1 || num(p[0]["pid"]) == 0 || num(o[0]["pid"]) == 0 {
			return false
		}
		row, orow = p[0], o[0]
		raw = env.Run(time.Minute, bin, "agents", "--json").Stdout
		return true
	}, func() string {
		return fmt.Sprintf("rows %v; claude agents: %s", topRows(t, env, ll, state), env.Run(time.Minute, bin, "agents", "--json").Stdout)
	})
	t.Logf("claude agents --json: %s", raw)
	t.Logf("rows: %v / %v", row, orow)
	for _, r := range []map[string]any{row, orow} {
		id := r["id"].(string)
		if dig(r, "external", "source") != "claude agents" || r["harness"] != "claude" {
			t.Errorf("row %s: external %v, harness %v; want source \"claude agents\", harness claude", id, r["external"], r["harness"])
		}
		if s, _ := r["state"].(string); s != "working" && s != "blocked" {
			t.Errorf("row %s: state %q, want working or blocked", id, s)
		}
		if r["cwd"] != env.Dir {
			t.Errorf("row %s: cwd %v, want %s", id, r["cwd"], env.Dir)
		}
		if dig(r, "external", "attach") != "claude attach "+id {
			t.Errorf("row %s: attach %v", id, dig(r, "external", "attach"))
		}
		// The pid is the process Claude's registry names for the session.
		pid := num(r["pid"])
		b, err := os.ReadFile(filepath.Join(claudeDir, "sessions", strconv.Itoa(pid)+".json"))
		var reg struct {
			SessionID string `json:"sessionId"`
		}
		if err != nil || json.Unmarshal(b, &reg) != nil || reg.SessionID != r["harness_session_id"] || !strings.HasPrefix(reg.SessionID, id) {
			t.Errorf("row %s: pid %d, session %v; Claude's registry for that pid: %s (%v)", id, pid, r["harness_session_id"], b, err)
		}
	}

	// One that waits for a person's permission: blocked, waiting, and
	// what for, in --json and the table; the command has not run.
	waiting := start("--permission-mode", "default", "make a file "+mockmodel.DefaultToolTrigger)
	var wrow map[string]any
	waitFor(t, "the row of the session waiting for a permission", func() bool {
		w := rowsWith(topRows(t, env, ll, state), waiting)
		if len(w) == 1 && dig(w[0], "external", "status") == "waiting" {
			wrow = w[0]
		}
		return wrow != nil
	}, func() string {
		return fmt.Sprintf("rows %v; claude agents: %s", topRows(t, env, ll, state), env.Run(time.Minute, bin, "agents", "--json").Stdout)
	})
	t.Logf("waiting row: %v", wrow)
	if wrow["state"] != "blocked" || dig(wrow, "external", "waiting_for") != "permission prompt" || wrow["last_event"] != "unsupervised (claude agents) · waits for permission prompt" {
		t.Errorf("row of the waiting session: state %v, external %v, last event %v; want blocked, waiting for \"permission prompt\"", wrow["state"], wrow["external"], wrow["last_event"])
	}
	if _, err := os.Stat(filepath.Join(env.Dir, "made-without-asking")); err == nil {
		t.Errorf("the command the waiting session asks permission for ran")
	}

	// The table says so too.
	once := env.Run(time.Minute, ll, "top", "--once", "--width", "200", "--state-dir", state)
	if !strings.Contains(once.Stdout, plain) || !strings.Contains(once.Stdout, "unsupervised (claude agents)") {
		t.Errorf("top --once:\n%s", once.Stdout)
	}
	if !regexp.MustCompile(waiting + ` +claude +blocked .* waiting `).MatchString(once.Stdout) {
		t.Errorf("top --once does not show %s blocked and waiting:\n%s", waiting, once.Stdout)
	}
	if off := topRows(t, env, ll, state); len(rowsWith(off, plain)) != 1 {
		t.Fatalf("top --json lost %s: %v", plain, off)
	}
	if res := env.Run(time.Minute, ll, "top", "--json", "--external=false", "--state-dir", state); strings.Contains(res.Stdout, plain) {
		t.Errorf("top --json --external=false lists %s: %s", plain, res.Stdout)
	}

	// The live view shows them too, and its keys do not act on them.
	live := testharness.StartTerminal(t, env.Command(ll, "top", "--state-dir", state), 200, 30)
	for _, s := range []string{plain, other, "unsupervised (claude agents)"} {
		topShows(t, live, s)
	}
	live.Type("a")
	topShows(t, live, "is not supervised by lifeloop (listed by claude agents)")
	live.Type("q")
	if code, _, err := live.WaitTimeout(screenTimeout); err != nil || code != 0 {
		t.Errorf("top: exit %d, %v", code, err)
	}

	// Stopped, it leaves top; Claude's files changed with it, so the live
	// view (which runs claude agents again when they do) asks again.
	h := claude.Harness{}
	stamp := h.ExternalStamp(env.Env())
	if r := env.Run(time.Minute, bin, "stop", plain); r.ExitCode != 0 {
		t.Fatalf("claude stop %s: rc %d: %s %s", plain, r.ExitCode, r.Stdout, r.Stderr)
	}
	waitFor(t, "the stopped session gone from top", func() bool {
		return len(rowsWith(topRows(t, env, ll, state), plain)) == 0
	}, func() string { return fmt.Sprint(topRows(t, env, ll, state)) })
	if len(rowsWith(topRows(t, env, ll, state), other)) != 1 {
		t.Errorf("the other session left top too")
	}
	if h.ExternalStamp(env.Env()) == stamp {
		t.Errorf("Claude's files did not change with the stop: %s", stamp)
	}

	// Under lifeloop's process wrapper (installed for the person's own
	// `claude --bg`; a daemon started after it runs its sessions through
	// it): lifeloop's row only.
	if r := env.Run(time.Minute, bin, "daemon", "stop", "--any"); r.ExitCode != 0 {
		t.Fatalf("claude daemon stop --any: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if r := env.Run(time.Minute, ll, "host", "apply", "--adapter", "claude", "--process-wrapper"); r.ExitCode != 0 {
		t.Fatalf("host apply --process-wrapper: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	wrapped := start("say hi under lifeloop")
	var own map[string]any
	waitFor(t, "lifeloop's row of the wrapped session, which claude agents lists", func() bool {
		listed := strings.Contains(env.Run(time.Minute, bin, "agents", "--json").Stdout, `"id": "`+wrapped+`"`)
		for _, r := range topRows(t, env, ll, state) {
			if s, _ := r["harness_session_id"].(string); r["external"] == nil && strings.HasPrefix(s, wrapped) {
				own = r
			}
		}
		return listed && own != nil
	}, func() string {
		return fmt.Sprintf("rows %v; claude agents: %s", topRows(t, env, ll, state), env.Run(time.Minute, bin, "agents", "--json").Stdout)
	})
	rows := topRows(t, env, ll, state)
	if got := rowsWith(rows, own["harness_session_id"].(string)); len(got) != 1 || got[0]["external"] != nil {
		t.Errorf("the wrapped session is listed %d times: %v", len(got), got)
	}
	if len(rowsWith(rows, wrapped)) != 0 {
		t.Errorf("the wrapped session is also listed from claude agents: %v", rowsWith(rows, wrapped))
	}
	if r := env.Run(time.Minute, ll, "host", "remove", "--adapter", "claude", "--process-wrapper"); r.ExitCode != 0 {
		t.Errorf("host remove --process-wrapper: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	// Its end ends lifeloop's session (and the processes lifeloop ran).
	if r := env.Run(time.Minute, bin, "daemon", "stop", "--any"); r.ExitCode != 0 {
		t.Fatalf("claude daemon stop --any: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	waitFor(t, "the end of lifeloop's session of the wrapped one", func() bool {
		got := rowsWith(topRows(t, env, ll, state), own["harness_session_id"].(string))
		return len(got) == 1 && got[0]["state"] == "completed"
	}, func() string { return fmt.Sprint(topRows(t, env, ll, state)) })
}
