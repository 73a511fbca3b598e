package codex

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/testharness"
)

// TestCodexAcceptsPreparedLaunch runs the pinned real Codex binary with
// each interactive command line PrepareLaunch produces (plus --help, so
// nothing starts) and requires Codex to accept it: --no-daemon is a valid
// option where PrepareLaunch puts it. A control line with an unknown
// option must be rejected, proving the check can fail.
func TestCodexAcceptsPreparedLaunch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real codex binary")
	}
	bin := testharness.CodexBin(t)
	a := adapters.AdapterOf(Harness{})
	tests := []struct {
		name   string
		argv   []string
		wantOK bool
	}{
		{"tui", []string{"codex"}, true},
		{"tui with prompt and options", []string{"codex", "-m", "mock-model", "fix it"}, true},
		{"resume", []string{"codex", "resume", "--last"}, true},
		{"fork", []string{"codex", "fork", "--last"}, true},
		{"agents", []string{"codex", "agents"}, true},
		{"control: unknown option", []string{"codex", "--no-such-option"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv := a.PrepareLaunch(tt.argv)
			if !slices.Contains(argv, "--no-daemon") {
				t.Fatalf("PrepareLaunch(%q) = %q: no --no-daemon", tt.argv, argv)
			}
			err := runCodexHelp(t, bin, append(argv[1:], "--help"))
			var ee *exec.ExitError
			switch {
			case tt.wantOK && err != nil:
				t.Errorf("codex %q: %v", argv[1:], err)
			case !tt.wantOK && !errors.As(err, &ee):
				t.Errorf("codex %q: err = %v, want a non-zero exit", argv[1:], err)
			}
		})
	}
}

// runCodexHelp runs codex in temporary homes, in its own process group,
// which is killed when the test ends.
func runCodexHelp(t *testing.T, bin string, args []string) error {
	t.Helper()
	home := t.TempDir()
	codexHome := filepath.Join(home, ".codex")
	if err := os.Mkdir(codexHome, 0o700); err != nil {
		t.Fatal(err)
	}
	// A safety net against a hung binary, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + home}
	cmd.Dir = home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Logf("codex %q output:\n%s", args, out)
	}
	return err
}
