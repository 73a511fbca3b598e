package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRunClaudeOrgLoop runs the real Claude Code under lifeloop with
// --format orgloop --events FILE and --orgloop-webhook to a loopback
// receiver that checks the signature as OrgLoop's coding-agent source
// does: every live line and every line of `receipts --format orgloop` is
// a whole OrgLoop event with OrgLoop's dedupe keys, the two agree on ids,
// and the receiver gets the session's start and stop once each.
func TestRunClaudeOrgLoop(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	const secret = "e2e-orgloop-secret"
	var mu sync.Mutex
	var posts []map[string]any
	var badSig int
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := hmac.New(sha256.New, []byte(secret))
		m.Write(body)
		mu.Lock()
		defer mu.Unlock()
		if !hmac.Equal([]byte(r.Header.Get("X-Hub-Signature-256")), []byte("sha256="+hex.EncodeToString(m.Sum(nil)))) {
			badSig++
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var v map[string]any
		_ = json.Unmarshal(body, &v)
		posts = append(posts, v)
	}))
	defer rcv.Close()

	mock := startMock(t, mockmodel.Config{Reply: "Wrapped answer from the mock."})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("LIFELOOP_ORGLOOP_WEBHOOK_SECRET", secret)
	state := stateDir(t)
	events := filepath.Join(t.TempDir(), "orgloop.ndjson")
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--format", "orgloop", "--events", events,
		"--orgloop-webhook", rcv.URL+"/webhook/lifeloop-sessions", "--", bin, "-p", "say hello")
	if res.ExitCode != 0 || res.Stderr != "" {
		t.Fatalf("lifeloop run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, _ := onlySession(t, state)

	live := checkOrgLoopLines(t, "--events", mustRead(t, events), session)
	out := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--latest", "--format", "orgloop")
	if out.ExitCode != 0 {
		t.Fatalf("receipts --format orgloop: exit %d: %s", out.ExitCode, out.Stderr)
	}
	replayed := checkOrgLoopLines(t, "receipts", out.Stdout, session)
	for key, id := range live {
		if replayed[key] != id {
			t.Errorf("%s: live id %s, receipts id %s", key, id, replayed[key])
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if badSig != 0 || len(posts) != 2 || posts[0]["hook_type"] != "start" || posts[1]["hook_type"] != "stop" {
		t.Fatalf("bad signatures %d, posts %v", badSig, posts)
	}
	if posts[1]["exit_status"] != 0.0 || posts[1]["session_id"] != session || dig(posts[1], "meta", "event_id") != live["claude-code:"+session+":completed"] {
		t.Errorf("stop post %v", posts[1])
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}

// checkOrgLoopLines checks every line of an --format orgloop output and
// returns the event id of each started/terminal dedupe key.
func checkOrgLoopLines(t *testing.T, what, out, session string) map[string]string {
	t.Helper()
	ids := map[string]string{}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, line := range lines {
		if err := contract.CheckOrgLoopJSON([]byte(line)); err != nil {
			t.Errorf("%s: %v\n%s", what, err, line)
			continue
		}
		var ev contract.OrgLoopEvent
		_ = json.Unmarshal([]byte(line), &ev)
		if ev.Source != "claude-code" || ev.Payload.Session.ID != session || ev.Provenance.Platform != "lifeloop" {
			t.Errorf("%s: %s", what, line)
		}
		if lc := ev.Payload.Lifecycle; lc.Phase != contract.PhaseActive {
			ids[lc.DedupeKey] = ev.ID
		}
	}
	for _, key := range []string{"claude-code:" + session + ":started", "claude-code:" + session + ":completed"} {
		if ids[key] == "" {
			t.Errorf("%s: no event with dedupe_key %s in\n%s", what, key, out)
		}
	}
	if len(ids) != 2 {
		t.Errorf("%s: started/terminal keys %v, want exactly the two", what, ids)
	}
	return ids
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
