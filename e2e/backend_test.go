package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// backend is a server program a test runs in its own process group (the
// OpenTelemetry backend, the log store), its output appended to a log
// file.
type backend struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has been reaped
}

// startBackend starts argv (not under the test's context: kill ends it,
// and a test may kill it mid-way on purpose) with env, its output
// appended to logPath, and waits until healthURL answers 200. It returns
// an error, with what the program logged this time, when the program
// exits first.
func startBackend(t *testing.T, name string, argv, env []string, logPath, healthURL string) (*backend, error) {
	t.Helper()
	logF, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logF.Close()
	from, _ := logF.Seek(0, io.SeekEnd)
	cmd := exec.CommandContext(context.Background(), argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logF, logF
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(b.exited) }()
	logged := func() string {
		data, _ := os.ReadFile(logPath)
		return string(data[min(int(from), len(data)):])
	}
	deadline := time.Now().Add(runTimeout)
	for {
		if resp, err := httpGet(t, healthURL); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return b, nil
			}
		}
		select {
		case <-b.exited:
			return nil, fmt.Errorf("%s exited before it was healthy:\n%s", name, logged())
		default:
		}
		if time.Now().After(deadline) {
			b.kill()
			t.Fatalf("%s did not become healthy:\n%s", name, logged())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// kill ends the program's process group with SIGKILL and reaps it.
func (b *backend) kill() {
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
	<-b.exited
}

// onFreePorts calls launch (which picks its ports) until it succeeds: a
// free port is free only until another test takes it, and tests run in
// parallel, so a port taken in between means new ports and a new try.
func onFreePorts(t *testing.T, name string, launch func() error) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		err := launch()
		if err == nil {
			return
		}
		if attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
		t.Logf("%s attempt %d: a port was taken meanwhile; new ports", name, attempt)
	}
}
