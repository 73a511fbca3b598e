package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/notify"
	"github.com/lifeloop/lifeloop/internal/otelmap"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// episodeSeen is one closed episode as a view shows it.
type episodeSeen struct {
	ID         int
	Kind       string
	DurationMs int64
}

// webhookReceiver keeps the attention documents posted to it, checking
// each signature with secret.
type webhookReceiver struct {
	mu   sync.Mutex
	docs []notify.Document
	bad  []string
}

func startWebhookReceiver(t *testing.T, secret string) (*webhookReceiver, string) {
	t.Helper()
	w := &webhookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.mu.Lock()
		defer w.mu.Unlock()
		if !notify.Verify([]byte(secret), r.Header.Get(notify.HeaderTimestamp), body, r.Header.Get(notify.HeaderSignature)) {
			w.bad = append(w.bad, "signature of "+r.Header.Get(notify.HeaderEvent))
		}
		var d notify.Document
		if err := json.Unmarshal(body, &d); err != nil {
			w.bad = append(w.bad, err.Error())
		}
		w.docs = append(w.docs, d)
	}))
	t.Cleanup(srv.Close)
	return w, srv.URL
}

func (w *webhookReceiver) closed() []episodeSeen {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []episodeSeen
	for _, d := range w.docs {
		if d.Event == "episode.closed" && d.Episode.DurationMs != nil {
			out = append(out, episodeSeen{d.Episode.ID, d.Episode.Kind, *d.Episode.DurationMs})
		}
	}
	return out
}

// TestAttentionClaudeEverywhere: one real Claude TUI session under `run`
// with a notifier command, a signed webhook and OTLP export into a real
// Jaeger. Its permission dialog shows as needs_permission in `status
// --json`, `top --json` and `sessions --json` alike; the command runs
// exactly once for it, after the typing that asked stops; answered, the
// turn ends waiting for input. Once the session is over, the ledger, the
// webhook and Jaeger hold the same closed episodes with the same
// durations, to the millisecond (the webhook those it announced).
func TestAttentionClaudeEverywhere(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "attention-everywhere-7c2d"
	ll := lifeloopBin(t)
	j := startJaeger(t)
	const secret = "test-secret-0a9f"
	hook, url := startWebhookReceiver(t, secret)
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("LIFELOOP_NOTIFY_SECRET", secret)
	state := stateDir(t)
	ran := filepath.Join(t.TempDir(), "notified")
	cmd := `printf '%s %s %s\n' "$LIFELOOP_ATTENTION" "$LIFELOOP_ATTENTION_EPISODE" "$LIFELOOP_ATTENTION_SOURCE" >> ` + ran

	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--otlp", j.endpoint(),
		"--notify", cmd, "--notify-webhook", url, "--notify-on", "needs_permission,waiting_for_input",
		"--", testharness.ClaudeBin(t), "--permission-mode", "default"), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	testharness.ClaudeScreenReady(t, term, 0)
	tc := safeTUIs[0]
	at := len(term.Output())
	prompt := "please " + mockmodel.DefaultToolTrigger + " now"
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	tc.send(term)
	waitOutputMatch(t, term, at, tc.dialog)
	ses, _ := onlySession(t, state)
	a := waitAttention(t, env, state, ses, 5*time.Second, "needs_permission")

	// The views agree on the open episode.
	var top, sessions []viewRow
	llJSON(t, env, &top, "top", "--state-dir", state, "--json")
	llJSON(t, env, &sessions, "sessions", "--state-dir", state, "--json")
	for name, got := range map[string]map[string]any{"top": firstAttention(top, ses), "sessions": firstAttention(sessions, ses)} {
		since, _ := got["since_epoch_ms"].(float64)
		if got["state"] != "needs_permission" || got["source"] != "hook" || int64(since) != a.Since.UnixMilli() {
			t.Errorf("%s --json attention %v, want needs_permission from hook since %d (status)", name, got, a.Since.UnixMilli())
		}
	}

	// The notifier runs once the typing has stopped for 2 s, while the
	// dialog waits; answer after it has.
	waitFileLine(t, ran, "needs_permission 1 hook")
	term.Type("\r") // "1. Yes"
	waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	endSafeTUI(t, env, term)

	// The ledger's closed episodes: attention_changed ticks and the end.
	_, receipts := onlySession(t, state)
	var ledger []episodeSeen
	for _, r := range receipts {
		sum, _ := r["telemetry_summary"].(map[string]any)
		att, _ := sum["attention"].(map[string]any)
		c, _ := att["closed"].(map[string]any)
		if c == nil {
			continue
		}
		id, _ := c["id"].(float64)
		kind, _ := c["kind"].(string)
		ms, _ := c["duration_ms"].(float64)
		ledger = append(ledger, episodeSeen{int(id), kind, int64(ms)})
	}
	if len(ledger) < 2 || ledger[0].Kind != "needs_permission" {
		t.Fatalf("ledger's closed episodes %+v, want needs_permission first and the turn's wait after", ledger)
	}
	lines := readLines(t, ran)
	if n := countPrefix(lines, "needs_permission "); n != 1 {
		t.Errorf("the notifier ran %d times for the dialog, want once: %q", n, lines)
	}

	// The webhook: the episodes it was told of (an episode that closed
	// while keys were being typed is never announced), closed with the
	// ledger's durations, signed.
	var webhook []episodeSeen
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if webhook = hook.closed(); len(webhook) > 0 {
			break
		}
	}
	if len(webhook) == 0 || webhook[0] != ledger[0] {
		t.Errorf("webhook closed episodes %+v, want the dialog's first, as the ledger has it: %+v", webhook, ledger)
	}
	for _, w := range webhook {
		if !slices.Contains(ledger, w) {
			t.Errorf("webhook closed episode %+v is not the ledger's (%+v)", w, ledger)
		}
	}
	hook.mu.Lock()
	if len(hook.bad) > 0 {
		t.Errorf("webhook documents that did not verify: %v", hook.bad)
	}
	hook.mu.Unlock()

	// Jaeger: one episode event per closed episode, with its duration.
	var spans []episodeSeen
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		spans = nil
		for _, e := range jaegerEvents(t, j, ses).events {
			if e.name != otelmap.EventAttentionEpisode {
				continue
			}
			id, _ := strconv.Atoi(e.fields[string(otelmap.AttrAttentionEpisode)])
			ms, _ := strconv.ParseInt(e.fields[string(otelmap.AttrAttentionDuration)], 10, 64)
			spans = append(spans, episodeSeen{id, e.fields[string(otelmap.AttrAttentionKind)], ms})
		}
		if len(spans) >= len(ledger) {
			break
		}
	}
	slices.SortFunc(spans, func(a, b episodeSeen) int { return a.ID - b.ID })
	if fmt.Sprint(spans) != fmt.Sprint(ledger) {
		t.Errorf("jaeger episode events %+v, ledger %+v", spans, ledger)
	}
	t.Logf("closed episodes: %+v; notifier lines %q", ledger, lines)
}

// viewRow is a session's row in `top --json` and `sessions --json`.
type viewRow struct {
	ID        string         `json:"id"`
	Attention map[string]any `json:"attention"`
}

// firstAttention is the attention of session id in a view's rows.
func firstAttention(rows []viewRow, id string) map[string]any {
	for _, r := range rows {
		if r.ID == id {
			return r.Attention
		}
	}
	return nil
}

func waitFileLine(t *testing.T, path, line string) {
	t.Helper()
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(50 * time.Millisecond) {
		if slices.Contains(readLines(t, path), line) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no line %q: %q", path, line, readLines(t, path))
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func countPrefix(lines []string, p string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, p) {
			n++
		}
	}
	return n
}
