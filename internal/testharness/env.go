package testharness

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// DefaultRunTimeout bounds every harness run started with HarnessEnv.Run
// when the caller passes no timeout. The machine running the tests may be
// slow and shared, so it is generous.
const DefaultRunTimeout = 3 * time.Minute

// MarkerVar is set in every HarnessEnv environment to a value unique to
// that environment; processes carrying it belong to the test (see
// HarnessEnv.StrayProcesses).
const MarkerVar = "LIFELOOP_TESTHARNESS_ENV"

// APIKey is the dummy credential handed to the harnesses. The mock accepts
// any key.
const APIKey = "sk-lifeloop-mock-0123456789abcdefghijklmnop"

// HarnessEnv is an isolated environment for one harness run: a temporary
// HOME (with Claude's onboarding/trust state seeded), a CODEX_HOME whose
// config.toml points Codex at the mock, and a temporary project directory
// used as the working directory. Nothing of the real home is inherited.
type HarnessEnv struct {
	// Home is the temporary HOME.
	Home string
	// Dir is the project directory (working directory of the harness),
	// resolved with realpath.
	Dir string
	// CodexHome is CODEX_HOME, inside Home.
	CodexHome string
	// Mock is the mock model server the harnesses talk to.
	Mock *mockmodel.Server

	t      testing.TB
	marker string
	extra  map[string]string
}

// NewHarnessEnv creates the environment for mock. Processes left behind
// by it (e.g. the Codex TUI's detached app-server daemon) are killed and
// reported in t.Cleanup.
func NewHarnessEnv(t testing.TB, mock *mockmodel.Server) *HarnessEnv {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	e := &HarnessEnv{
		Home:      filepath.Join(base, "home"),
		Dir:       filepath.Join(base, "project"),
		CodexHome: filepath.Join(base, "home", ".codex"),
		Mock:      mock,
		t:         t,
		marker:    hex.EncodeToString(rnd[:]),
		extra:     map[string]string{},
	}
	for _, d := range []string{e.Home, e.Dir, e.CodexHome, filepath.Join(e.Home, ".claude")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.writeCodexConfig(); err != nil {
		t.Fatal(err)
	}
	if err := e.writeClaudeState(); err != nil {
		t.Fatal(err)
	}
	if err := e.writePiConfig(); err != nil {
		t.Fatal(err)
	}
	if err := e.writeGeminiSettings(); err != nil {
		t.Fatal(err)
	}
	if err := e.writeOpenCodeConfig(DefaultOpenCodeLimits); err != nil {
		t.Fatal(err)
	}
	if err := e.writeOpenClawConfig(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range e.KillStrays() {
			t.Logf("testharness: killed a process left behind by the harness: pid %d: %s", p.PID, p.Cmdline)
		}
	})
	return e
}

func (e *HarnessEnv) writeCodexConfig() error {
	cfg := fmt.Sprintf(`model = "mock-model"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = %q
wire_api = "responses"
env_key = "MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
supports_websockets = false

[projects.%q]
trust_level = "trusted"
`, e.Mock.URL()+"/v1", e.Dir)
	return os.WriteFile(filepath.Join(e.CodexHome, "config.toml"), []byte(cfg), 0o600)
}

// writeClaudeState seeds $HOME/.claude.json so the interactive TUI skips
// onboarding, the API-key approval and the folder-trust dialogs.
func (e *HarnessEnv) writeClaudeState() error {
	state := map[string]any{
		"hasCompletedOnboarding":        true,
		"lastOnboardingVersion":         "2.1.197",
		"numStartups":                   1,
		"customApiKeyResponses":         map[string]any{"approved": []string{APIKey[len(APIKey)-20:]}, "rejected": []string{}},
		"bypassPermissionsModeAccepted": false,
		"projects": map[string]any{
			e.Dir: map[string]any{
				"hasTrustDialogAccepted":        true,
				"hasCompletedProjectOnboarding": true,
				"allowedTools":                  []string{},
			},
		},
	}
	b, err := json.MarshalIndent(state, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(e.Home, ".claude.json"), b, 0o600)
}

// Setenv adds or overrides one variable of Env for later runs.
func (e *HarnessEnv) Setenv(key, value string) { e.extra[key] = value }

// Env returns the full environment for a harness run. Only PATH is taken
// from the test process; HOME, XDG folders, credentials and endpoints all
// point into the temporary environment.
func (e *HarnessEnv) Env() []string {
	vars := map[string]string{
		"PATH":            os.Getenv("PATH"),
		"HOME":            e.Home,
		"USER":            "lifeloop-test",
		"LOGNAME":         "lifeloop-test",
		"SHELL":           "/bin/bash",
		"TERM":            "xterm-256color",
		"LANG":            "C.UTF-8",
		"TMPDIR":          os.TempDir(),
		"XDG_CONFIG_HOME": filepath.Join(e.Home, ".config"),
		"XDG_CACHE_HOME":  filepath.Join(e.Home, ".cache"),
		"XDG_DATA_HOME":   filepath.Join(e.Home, ".local", "share"),
		"XDG_STATE_HOME":  filepath.Join(e.Home, ".local", "state"),
		MarkerVar:         e.marker,

		// Claude Code: the mock, a dummy key, and no traffic elsewhere.
		"ANTHROPIC_BASE_URL":                       e.Mock.URL(),
		"ANTHROPIC_API_KEY":                        APIKey,
		"DISABLE_AUTOUPDATER":                      "1",
		"DISABLE_TELEMETRY":                        "1",
		"DISABLE_ERROR_REPORTING":                  "1",
		"DISABLE_BUG_COMMAND":                      "1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
		"CLAUDE_CODE_DISABLE_TERMINAL_TITLE":       "1",

		// Codex: its home with the mock provider, and the provider's key.
		"CODEX_HOME":         e.CodexHome,
		"MOCK_API_KEY":       APIKey,
		"NO_UPDATE_NOTIFIER": "1",

		// OpenCode: no models.dev fetch, no update check, no sharing, and
		// no registry (its plugin package is pre-installed).
		"OPENCODE_DISABLE_MODELS_FETCH": "1",
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_DISABLE_SHARE":        "1",
		"npm_config_registry":           "http://127.0.0.1:9/",
	}
	for k, v := range piEnv {
		vars[k] = v
	}
	for k, v := range openClawEnv {
		vars[k] = v
	}
	e.geminiEnv(vars)
	for k, v := range e.extra {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Command returns a command for bin with args, running in Dir with Env, in
// its own process group. It is not started. The process is killed when
// the test ends.
func (e *HarnessEnv) Command(bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(e.t.Context(), bin, args...)
	cmd.Dir = e.Dir
	cmd.Env = e.Env()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// Result is the outcome of HarnessEnv.Run.
type Result struct {
	Stdout, Stderr string
	// ExitCode is the exit code, or -1 when the process died of a signal.
	ExitCode int
	// Signal is the signal that killed the process, or 0.
	Signal syscall.Signal
	// Duration is the wall time of the run.
	Duration time.Duration
}

// Run runs bin with args in the environment, stdin from /dev/null, and
// waits for it. After timeout (DefaultRunTimeout when 0) the whole process
// group is killed and the test fails. The process group is always killed
// when Run returns.
func (e *HarnessEnv) Run(timeout time.Duration, bin string, args ...string) Result {
	e.t.Helper()
	return e.run(timeout, nil, bin, args...)
}

// RunInput is Run with stdin read from a pipe that carries input.
func (e *HarnessEnv) RunInput(timeout time.Duration, input, bin string, args ...string) Result {
	e.t.Helper()
	return e.run(timeout, strings.NewReader(input), bin, args...)
}

func (e *HarnessEnv) run(timeout time.Duration, stdin io.Reader, bin string, args ...string) Result {
	e.t.Helper()
	if timeout <= 0 {
		timeout = DefaultRunTimeout
	}
	cmd := e.Command(bin, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Children that keep stdout open (e.g. a notify helper) must not hold
	// Wait forever.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Start(); err != nil {
		e.t.Fatalf("start %s: %v", bin, err)
	}
	pgid := cmd.Process.Pid
	e.t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	var err error
	select {
	case err = <-waited:
	case <-ctx.Done():
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		err = <-waited
		e.t.Errorf("%s %s did not finish within %v; killed its process group\nstdout:\n%s\nstderr:\n%s",
			filepath.Base(bin), strings.Join(args, " "), timeout, stdout.String(), stderr.String())
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	res := Result{Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	res.ExitCode, res.Signal = exitStatus(cmd.ProcessState, err)
	return res
}

// exitStatus extracts the exit code and killing signal from a finished
// command.
func exitStatus(ps *os.ProcessState, err error) (int, syscall.Signal) {
	if ps == nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ps = ee.ProcessState
		}
	}
	if ps == nil {
		return -1, 0
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, ws.Signal()
	}
	return ps.ExitCode(), 0
}

// ClaudeProjectsDir is the folder where Claude Code writes this
// environment's transcripts: $HOME/.claude/projects/<escaped Dir>.
func (e *HarnessEnv) ClaudeProjectsDir() string {
	return filepath.Join(e.Home, ".claude", "projects", ClaudeProjectDirName(e.Dir))
}

// CodexSessionsDir is $CODEX_HOME/sessions, the root of Codex's
// YYYY/MM/DD/rollout-*.jsonl files.
func (e *HarnessEnv) CodexSessionsDir() string { return filepath.Join(e.CodexHome, "sessions") }

// ClaudeTranscripts lists the *.jsonl transcripts in ClaudeProjectsDir,
// sorted.
func (e *HarnessEnv) ClaudeTranscripts() []string {
	m, _ := filepath.Glob(filepath.Join(e.ClaudeProjectsDir(), "*.jsonl"))
	sort.Strings(m)
	return m
}

// CodexRollouts lists every rollout-*.jsonl under CodexSessionsDir,
// sorted.
func (e *HarnessEnv) CodexRollouts() []string {
	var out []string
	_ = filepath.WalkDir(e.CodexSessionsDir(), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasPrefix(d.Name(), "rollout-") && strings.HasSuffix(d.Name(), ".jsonl") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// StrayProcesses lists live processes (zombies excluded) started from this
// environment: those whose environment carries this environment's
// MarkerVar or CODEX_HOME. The Codex TUI's detached app-server daemon is
// the known case; it reparents to init and escapes process-group kills.
func (e *HarnessEnv) StrayProcesses() []Proc {
	return scanProcs(envMatcher([]string{MarkerVar + "=" + e.marker, "CODEX_HOME=" + e.CodexHome}))
}
