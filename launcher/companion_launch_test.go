package launcher

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// TestLaunchStartsCompanion: Launch runs Options.Companion(id) for the
// session it opens, with Options.Env and the session's variables, and
// stops it when the session ends.
func TestLaunchStartsCompanion(t *testing.T) {
	t.Parallel()
	root, work := t.TempDir(), t.TempDir()
	pidFile := filepath.Join(work, "companion.pid")
	script := filepath.Join(work, "companion.sh")
	body := "#!/bin/sh\necho $$ > " + pidFile + "\necho \"id=$LIFELOOP_SESSION_ID arg=$2 mark=$MARK socket=${LIFELOOP_CONTROL_SOCKET:+set}\"\nexec sleep 1000\n"
	if err := writeExecutable(script, []byte(body)); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := Launch(context.Background(), Options{
		StateDir: root, Argv: []string{"sh", "-c", "sleep 0.5"}, Dir: work, Env: []string{"PATH=/usr/bin:/bin", "MARK=env"},
		In: strings.NewReader(""), Out: io.Discard, Registry: builtin.Default(),
		Companion: func(id string) []string { return []string{script, "autorenew", id} },
	})
	if err != nil {
		t.Fatal(err)
	}
	// The companion sleeps 1000 s: a session that waited for it would
	// take that long; the bound is loose for a loaded machine.
	if d := time.Since(start); d > 60*time.Second {
		t.Errorf("the session took %v with a companion that never exits", d)
	}
	b, _ := os.ReadFile(filepath.Join(statedir.SessionDir(root, res.SessionID), CompanionLog))
	if want := "id=" + res.SessionID + " arg=" + res.SessionID + " mark=env socket=set"; !strings.Contains(string(b), want) {
		log, _ := os.ReadFile(statedir.LogPath(root, res.SessionID))
		t.Errorf("companion.log %q, want %q; the session's log:\n%s", b, want, log)
	}
	raw, _ := os.ReadFile(pidFile)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err != nil || alive(pid) {
		t.Errorf("companion pid %q: %v, alive after the session", raw, err)
	}
}
