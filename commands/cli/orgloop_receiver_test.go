package cli

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

// orgLoopReceiverMain is the script command
//
//	orgloop-receiver URLFILE LOG
//
// a loopback stand-in for OrgLoop's coding-agent webhook source: it
// listens on 127.0.0.1 (on the address in URLFILE when that file exists,
// so a receiver started again comes back where the last one was; else on
// a free port, whose URL it writes there), checks X-Hub-Signature-256
// against $LIFELOOP_ORGLOOP_WEBHOOK_SECRET as OrgLoop does (401 when it
// does not match), and appends each accepted post to LOG as one line
// {"event_id":…,"body":…}. It runs until SIGTERM or SIGINT.
func orgLoopReceiverMain() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: orgloop-receiver URLFILE LOG")
		os.Exit(2)
	}
	urlFile, logPath := os.Args[1], os.Args[2]
	addr := "127.0.0.1:0"
	if b, err := os.ReadFile(urlFile); err == nil {
		addr = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(string(b)), "http://"), "/webhook/lifeloop")
	}
	var ln net.Listener
	var err error
	for i := 0; i < 100; i++ { // the port may linger a moment after the last receiver
		if ln, err = (&net.ListenConfig{}).Listen(context.Background(), "tcp", addr); err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	secret := []byte(os.Getenv(orgLoopSecretEnv))
	logF, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var mu sync.Mutex
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m := hmac.New(sha256.New, secret)
		m.Write(body)
		if !hmac.Equal([]byte(r.Header.Get("X-Hub-Signature-256")), []byte("sha256="+hex.EncodeToString(m.Sum(nil)))) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		line, _ := json.Marshal(map[string]any{"event_id": r.Header.Get("X-Lifeloop-Event-Id"), "body": json.RawMessage(body)})
		mu.Lock()
		_, _ = logF.Write(append(line, '\n'))
		_ = logF.Sync()
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	})}
	if _, err := os.Stat(urlFile); err != nil {
		tmp := urlFile + ".tmp"
		_ = os.WriteFile(tmp, []byte("http://"+ln.Addr().String()+"/webhook/lifeloop"), 0o600)
		_ = os.Rename(tmp, urlFile)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	go func() { <-sigs; _ = srv.Close() }()
	_ = srv.Serve(ln)
	os.Exit(0)
}
