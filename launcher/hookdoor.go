package launcher

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lifeloop/lifeloop/hooks"
)

// hookDoor takes a session's hook calls over HTTP on 127.0.0.1, for a
// harness that can post its hooks instead of running a program for each
// (adapters.BridgeTarget.HookHTTP): POST /hook/<adapter>/<hook> with the
// hook's JSON as the body and the door's bearer token. Each call is
// handed to the supervisor's loop like a `lifeloop host-hook` call over
// the control socket, and the answer's body is what host-hook would have
// printed. The token lives only in the session folder's settings file
// (0600); a call without it is refused and records nothing.
type hookDoor struct {
	ln    net.Listener
	srv   *http.Server
	token string
	done  chan struct{}
	// serve hands one call to the supervisor; nil until it runs, when
	// calls are refused (the harness has not started yet).
	serve atomic.Pointer[hookServer]
}

// hookServer answers one hook call with the hook's response body.
type hookServer func(ctx context.Context, args hooks.HookArgs) ([]byte, error)

// hookDoorTimeout bounds one call inside the wrapper, like host-hook's
// own bound; the harness's bound (hooks.HTTPTimeoutSeconds) is longer.
const hookDoorTimeout = 2 * time.Second

// openHookDoor listens on a loopback port the kernel picks.
func openHookDoor() (*hookDoor, error) {
	ln, err := (&net.ListenConfig{}).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	var key [24]byte
	_, _ = rand.Read(key[:])
	d := &hookDoor{ln: ln, token: hex.EncodeToString(key[:]), done: make(chan struct{})}
	// The server's own error log would go to lifeloop's stderr: the
	// terminal the harness owns.
	d.srv = &http.Server{Handler: d, ReadHeaderTimeout: hookDoorTimeout, ErrorLog: log.New(io.Discard, "", 0)}
	go func() { // ends when close shuts the server down
		defer close(d.done)
		_ = d.srv.Serve(ln)
	}()
	return d, nil
}

// target is where the harness posts its hooks.
func (d *hookDoor) target() hooks.HTTPTarget {
	return hooks.HTTPTarget{URL: "http://" + d.ln.Addr().String() + "/hook", Token: d.token}
}

// ServeHTTP implements http.Handler.
func (d *hookDoor) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(got), []byte(d.token)) != 1 {
		http.Error(w, "not this session's hook call", http.StatusUnauthorized)
		return
	}
	adapter, hook, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/hook/"), "/")
	if r.Method != http.MethodPost || !strings.HasPrefix(r.URL.Path, "/hook/") || !ok || adapter == "" || hook == "" {
		http.Error(w, "POST /hook/<adapter>/<hook>", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hooks.MaxStdin))
	if err != nil {
		http.Error(w, "hook input too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	serve := d.serve.Load()
	if serve == nil {
		http.Error(w, "the session is not running yet", http.StatusServiceUnavailable)
		return
	}
	args := hooks.HookArgs{Adapter: adapter, Hook: hook}
	if json.Valid(body) {
		args.Stdin = json.RawMessage(body)
	} else {
		args.StdinBase64 = base64.StdEncoding.EncodeToString(body) // recorded as a failed call, like host-hook's
	}
	ctx, cancel := context.WithTimeout(r.Context(), hookDoorTimeout)
	defer cancel()
	resp, err := (*serve)(ctx, args)
	if err != nil {
		// The harness carries on without lifeloop's answer, as it does when
		// host-hook cannot reach the wrapper.
		http.Error(w, "the session did not take the hook call", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(resp)
}

// close stops taking calls and waits for those under way.
func (d *hookDoor) close() {
	ctx, cancel := context.WithTimeout(context.Background(), hookDoorTimeout)
	defer cancel()
	if err := d.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = d.srv.Close()
	}
	<-d.done
}

// lazyHookDoor opens the door the first time a harness asks for it
// (adapters.BridgeTarget.HookHTTP): a harness that runs its hooks as
// programs never gets a listener.
type lazyHookDoor struct {
	once sync.Once
	door *hookDoor
	err  error
}

func (l *lazyHookDoor) open() (hooks.HTTPTarget, error) {
	l.once.Do(func() { l.door, l.err = openHookDoor() })
	if l.err != nil {
		return hooks.HTTPTarget{}, l.err
	}
	return l.door.target(), nil
}
