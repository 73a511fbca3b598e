package otlpcmd

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// unavailable is an OTLP backend on 127.0.0.1 that answers every post
// 503 Service Unavailable, counting them.
func unavailable(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		posts.Add(1)
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &posts
}

// session writes a short session's ledger under a new state folder.
func session(t *testing.T) (root, id string) {
	t.Helper()
	root, id = t.TempDir(), "ses_01TESTOTLP00000000000000"
	if _, err := statedir.CreateSessionDir(root, id); err != nil {
		t.Fatal(err)
	}
	led, err := ledger.Open(statedir.ReceiptsPath(root, id), ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer led.Close()
	for _, ev := range []contract.Event{contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnded} {
		r := contract.LifecycleReceipt{ClientID: "lifeloop", AdapterID: "generic", InvocationID: "inv_1", Event: ev, EventID: "evt_" + string(ev),
			IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, AtEpochS: 1778100000}
		if _, _, err := led.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	return root, id
}

// TestExportEndsSayingWhy: against a backend that answers 503, the export
// ends at its bound with exit 1, a report that owes the session, and one
// line on stderr naming what the backend answered and how to continue.
func TestExportEndsSayingWhy(t *testing.T) {
	endpoint, posts := unavailable(t)
	root, id := session(t)
	var out, errOut bytes.Buffer
	code := Main([]string{"lifeloop-otlp", "--state-dir", root, "--endpoint", endpoint, "--drain", "1s", id},
		Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(string) string { return "" }})
	if code != exitOwed {
		t.Fatalf("exit %d, want %d; stderr %q", code, exitOwed, errOut.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || rep.Owed == 0 || rep.Exported != 0 {
		t.Fatalf("report %s (%v), want the session owed", out.String(), err)
	}
	if posts.Load() == 0 {
		t.Fatal("the backend got no post")
	}
	lines := strings.Split(strings.TrimSpace(errOut.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d lines, want 1:\n%s", len(lines), errOut.String())
	}
	for _, want := range []string{id, "503", "overloaded", "lifeloop export otlp " + id, "continue"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("stderr line does not say %q: %s", want, lines[0])
		}
	}
	t.Logf("stderr: %s", lines[0])
}
