package watch

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
)

// The parent is the newest launcher a lifeloop session recorded; one no
// session recorded is still named, without a lifeloop session.
func TestProcessParent(t *testing.T) {
	root := t.TempDir()
	for id, harness := range map[string]string{"ses_01M8W469CD9RK3CT56YAJ7690X": "older", "ses_01M8W47J6B3XEQ5TCC87AQX35Q": "newer"} {
		if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "a", IntegrationMode: "launcher_wrapper", HarnessSessionIDs: []string{harness}}); err != nil {
			t.Fatal(err)
		}
	}
	p := &Process{StateDir: root, LaunchedBy: []string{"older", "newer", "unrecorded"}}
	if got := p.parent(); got == nil || got.HarnessSessionID != "newer" || got.SessionID != "ses_01M8W47J6B3XEQ5TCC87AQX35Q" {
		t.Fatalf("parent %+v", got)
	}
	p.LaunchedBy = []string{"unrecorded"}
	if got := p.parent(); got == nil || got.HarnessSessionID != "unrecorded" || got.SessionID != "" {
		t.Fatalf("parent %+v", got)
	}
	p.LaunchedBy = nil
	if got := p.parent(); got != nil {
		t.Fatalf("parent %+v with no launcher", got)
	}
}

// exited fires once the process is gone, and not while it runs.
func TestProcessExited(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reaped := make(chan struct{})
	go func() { _ = cmd.Wait(); close(reaped) }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	exited := (&Process{Pid: cmd.Process.Pid}).exited(ctx)
	select {
	case <-exited:
		t.Fatal("exited while the process runs")
	case <-time.After(3 * processPoll):
	}
	_ = cmd.Process.Kill()
	<-reaped
	<-exited
	if (*Process)(nil).exited(ctx) != nil {
		t.Fatal("a nil process has an end")
	}
}
