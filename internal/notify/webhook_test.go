package notify

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testutil"
)

// delivery is one request the test receiver got.
type delivery struct {
	header http.Header
	body   []byte
}

// receiver is a webhook on 127.0.0.1 that keeps what it gets and answers
// status.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []delivery
	status int
	// entered, when set, is told of each request before hold is waited on.
	entered chan struct{}
	hold    chan struct{}
}

func newReceiver(t *testing.T, status int) *receiver {
	r := &receiver{status: status}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, delivery{req.Header.Clone(), body})
		r.mu.Unlock()
		if r.entered != nil {
			r.entered <- struct{}{}
			<-r.hold
		}
		w.WriteHeader(r.status)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func TestWebhookGetsOpenedAndClosedSigned(t *testing.T) {
	r := newReceiver(t, http.StatusNoContent)
	const secret = "webhook-secret"
	now := time.Unix(1_800_000_000, 0)
	log, logged := logger()
	n := New(Config{WebhookURL: r.srv.URL + "/hook", WebhookSecret: secret, Now: func() time.Time { return now }}, log)
	e := episode(4, "needs_permission")
	n.Opened(e)
	e.End, e.Duration = since.Add(90*time.Second+250*time.Millisecond), 90*time.Second+250*time.Millisecond
	n.Closed(e)
	n.Wait(time.Minute)

	got := r.deliveries()
	if len(got) != 2 {
		t.Fatalf("the webhook got %d posts, want 2", len(got))
	}
	for i, event := range []string{"episode.opened", "episode.closed"} {
		d := got[i]
		ts := d.header.Get(HeaderTimestamp)
		if ts != "1800000000" {
			t.Errorf("%s: timestamp %q", event, ts)
		}
		if !Verify([]byte(secret), ts, d.body, d.header.Get(HeaderSignature)) {
			t.Errorf("%s: signature %q does not verify", event, d.header.Get(HeaderSignature))
		}
		if Verify([]byte("another secret"), ts, d.body, d.header.Get(HeaderSignature)) {
			t.Errorf("%s: the signature verifies under another secret", event)
		}
		if d.header.Get(HeaderEvent) != event || d.header.Get(HeaderDelivery) != "lls_test/4/"+event ||
			d.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: headers %v", event, d.header)
		}
		var doc Document
		if err := json.Unmarshal(d.body, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Schema != Schema || doc.Event != event || doc.Session != "lls_test" || doc.Harness != "fakeharness" ||
			doc.Cwd != "/work/proj" || doc.Episode.ID != 4 || doc.Episode.Kind != "needs_permission" ||
			doc.Episode.Source != "hook" || doc.Episode.Evidence != "PermissionRequest" ||
			doc.Episode.Detail != "Bash: ls -la" || doc.Episode.Turn != 2 || doc.Episode.Since != "2026-12-02T15:04:05.678Z" {
			t.Errorf("%s: document %s", event, d.body)
		}
	}
	var opened, closed map[string]any
	_ = json.Unmarshal(got[0].body, &opened)
	_ = json.Unmarshal(got[1].body, &closed)
	if ep := opened["episode"].(map[string]any); ep["end"] != nil || ep["duration_ms"] != nil {
		t.Errorf("episode.opened carries an end: %s", got[0].body)
	}
	if ep := closed["episode"].(map[string]any); ep["end"] != "2026-12-02T15:05:35.928Z" || ep["duration_ms"] != 90250.0 {
		t.Errorf("episode.closed's end and duration: %s", got[1].body)
	}
	if s := logged.String(); s != "" {
		t.Errorf("delivered posts were logged: %s", s)
	}
}

func TestWebhookWithoutSecretIsUnsigned(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	n := New(Config{WebhookURL: r.srv.URL}, nil)
	n.Opened(episode(1, "needs_answer"))
	n.Wait(time.Minute)
	got := r.deliveries()
	if len(got) != 1 || got[0].header.Get(HeaderSignature) != "" || got[0].header.Get(HeaderTimestamp) == "" {
		t.Fatalf("want one unsigned post with a timestamp, got %d: %v", len(got), got)
	}
}

func TestSlowWebhookBlocksNeitherTheCallerNorTheCommand(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	r.entered, r.hold = make(chan struct{}, 8), make(chan struct{})
	dir := t.TempDir()
	n := New(Config{
		WebhookURL: r.srv.URL,
		Command:    `echo $LIFELOOP_ATTENTION_EPISODE >> "$NOTIFY_TEST_DIR/runs"`,
		Env:        testEnv(dir),
	}, nil)
	n.Opened(episode(1, "needs_permission"))
	<-r.entered // the first post is held by the receiver
	// These return while that post is held: were they to wait for it,
	// the test would never get past them.
	e := episode(1, "needs_permission")
	e.End, e.Duration = since.Add(time.Second), time.Second
	n.Closed(e)
	n.Opened(episode(2, "waiting_for_input"))
	// The command's lane goes on while the webhook's waits.
	testutil.WaitFor(t, func() bool { return len(lines(t, filepath.Join(dir, "runs"))) == 2 })
	if got := len(r.deliveries()); got != 1 {
		t.Fatalf("the receiver has %d posts while it holds the first, want 1", got)
	}
	close(r.hold)
	n.Wait(time.Minute)
	var order []string
	for _, d := range r.deliveries() {
		order = append(order, d.header.Get(HeaderDelivery))
	}
	if want := "lls_test/1/episode.opened lls_test/1/episode.closed lls_test/2/episode.opened"; strings.Join(order, " ") != want {
		t.Fatalf("posts in order %v, want %s", order, want)
	}
}

func TestWebhookRetriesOnceThenLogsOnce(t *testing.T) {
	defer func(p time.Duration) { retryPause = p }(retryPause)
	retryPause = time.Millisecond
	for _, tc := range []struct {
		status, posts int
	}{
		{http.StatusServiceUnavailable, 2}, // may pass: one retry
		{http.StatusBadRequest, 1},         // will not: none
	} {
		r := newReceiver(t, tc.status)
		log, logged := logger()
		n := New(Config{WebhookURL: r.srv.URL + "/hook?token=tok3n"}, log)
		n.Opened(episode(1, "stopped_on_error"))
		n.Opened(episode(2, "stopped_on_error"))
		n.Wait(time.Minute)
		if got := len(r.deliveries()); got != 2*tc.posts {
			t.Errorf("status %d: %d posts for 2 episodes, want %d", tc.status, got, 2*tc.posts)
		}
		if c := strings.Count(logged.String(), "notifier failed"); c != 1 || !strings.Contains(logged.String(), "notifier=webhook") {
			t.Errorf("status %d: %d failures logged, want 1:\n%s", tc.status, c, logged)
		}
		if strings.Contains(logged.String(), "tok3n") {
			t.Errorf("the log holds the URL's query: %s", logged)
		}
	}
}

func TestUnreachableWebhookIsLoggedWithoutItsSecretParts(t *testing.T) {
	defer func(p time.Duration) { retryPause = p }(retryPause)
	retryPause = time.Millisecond
	r := newReceiver(t, http.StatusOK)
	url := "http://user:pa55@" + strings.TrimPrefix(r.srv.URL, "http://") + "/hook?token=tok3n"
	r.srv.Close() // nothing listens there any more
	log, logged := logger()
	n := New(Config{WebhookURL: url, WebhookSecret: "s3cret"}, log)
	n.Opened(episode(1, "needs_answer"))
	n.Wait(time.Minute)
	s := logged.String()
	if !strings.Contains(s, "after one retry") {
		t.Errorf("the failure is not logged once, after its retry: %s", s)
	}
	for _, secret := range []string{"tok3n", "pa55", "s3cret"} {
		if strings.Contains(s, secret) {
			t.Errorf("the log holds %q: %s", secret, s)
		}
	}
}

func TestFullQueueDropsAndLogsOnce(t *testing.T) {
	r := newReceiver(t, http.StatusOK)
	r.entered, r.hold = make(chan struct{}, 64), make(chan struct{})
	log, logged := logger()
	n := New(Config{WebhookURL: r.srv.URL}, log)
	n.Opened(episode(1, "needs_answer"))
	<-r.entered // the first is under way, out of the queue
	for id := 2; id <= queueMax+4; id++ {
		n.Opened(episode(id, "needs_answer"))
	}
	close(r.hold)
	n.Wait(time.Minute)
	if got := len(r.deliveries()); got != 1+queueMax {
		t.Errorf("%d posts, want %d (one under way, a full queue)", got, 1+queueMax)
	}
	if c := strings.Count(logged.String(), "dropped"); c != 1 {
		t.Errorf("%d drops logged, want 1:\n%s", c, logged)
	}
}

func TestCheckURL(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:8080/hook", "https://hooks.example.com/x?token=1"} {
		if err := CheckURL(u); err != nil {
			t.Errorf("CheckURL(%q) = %v", u, err)
		}
	}
	for _, u := range []string{"", "ftp://example.com", "127.0.0.1:8080", "http://"} {
		if CheckURL(u) == nil {
			t.Errorf("CheckURL(%q) accepted it", u)
		}
	}
}
