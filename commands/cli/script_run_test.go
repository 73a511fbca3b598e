package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// cmdWaitFile waits up to 30s for a file to exist: `waitfile PATH`.
// Scripts use it to sync with a background harness without sleeping.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile PATH")
	}
	p := ts.MkAbs(args[0])
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(p); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfile: %s did not appear within 30s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdCtl calls a live wrapper's control socket as any local program may,
// without `lifeloop` in between: `ctl SIDFILE OP [ARGS_JSON]`, SIDFILE
// holding the session id. The answer's JSON goes to stdout; a refusal's
// message to stderr, and the command fails (use ! to expect that).
func cmdCtl(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: ctl SIDFILE OP [ARGS_JSON]")
	}
	sid := strings.TrimSpace(ts.ReadFile(args[0]))
	var in json.RawMessage
	if len(args) == 3 {
		in = json.RawMessage(args[2])
	}
	root := ts.Getenv("LIFELOOP_STATE_DIR")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out json.RawMessage
	err := control.Call(ctx, scriptSocket(ts, root, sid), args[1], in, &out)
	ts.Stdout().Write(append(out, '\n'))
	if err != nil {
		fmt.Fprintln(ts.Stderr(), err)
	}
	if (err != nil) != neg {
		ts.Fatalf("ctl %s: %v", args[1], err)
	}
}

// scriptSocket is the control socket of session sid as the script's
// programs find it: a socket too long for its folder lives in the
// script's temporary folder, not the test process's.
func scriptSocket(ts *testscript.TestScript, root, sid string) string {
	dir := statedir.SessionDir(root, sid)
	p := control.SocketIn(dir)
	if !strings.HasPrefix(p, dir) {
		p = filepath.Join(ts.Getenv("TMPDIR"), filepath.Base(p))
	}
	return p
}
