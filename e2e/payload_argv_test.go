package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// cmdlineWatch reads every process's /proc/PID/cmdline, over and over,
// from start until stop, and remembers the distinct command lines (of
// processes other than the test itself) that contain one of its needles.
type cmdlineWatch struct {
	needles []string
	done    chan struct{}
	wg      sync.WaitGroup

	mu    sync.Mutex
	seen  map[string][]string // needle → command lines
	scans int
}

// watchCmdlines starts polling for needles; stop ends it.
func watchCmdlines(needles ...string) *cmdlineWatch {
	w := &cmdlineWatch{needles: needles, done: make(chan struct{}), seen: map[string][]string{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		self := strconv.Itoa(os.Getpid())
		for {
			select {
			case <-w.done:
				return
			default:
			}
			ents, _ := os.ReadDir("/proc")
			for _, e := range ents {
				if e.Name()[0] < '0' || e.Name()[0] > '9' || e.Name() == self {
					continue
				}
				raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				if err != nil || len(raw) == 0 {
					continue
				}
				for _, n := range w.needles {
					if bytes.Contains(raw, []byte(n)) {
						c := strings.ReplaceAll(string(raw), "\x00", " ")
						w.mu.Lock()
						if len(w.seen[n]) < 20 && !slices.Contains(w.seen[n], c) {
							w.seen[n] = append(w.seen[n], c)
						}
						w.mu.Unlock()
					}
				}
			}
			w.mu.Lock()
			w.scans++
			w.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()
	return w
}

// stop ends the polling and returns, per needle, the command lines that
// held it, and how many full scans of /proc ran.
func (w *cmdlineWatch) stop() (map[string][]string, int) {
	close(w.done)
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen, w.scans
}

// TestPayloadNeverInArgv: `lifeloop run --payload` of every harness whose
// launch placement is claimed, while a poller reads every process's
// /proc/PID/cmdline for the whole run. The payload's unique marker never
// appears in any command line, and it reaches the mock model's request.
// The poller proves it can see the harness's command line: the prompt's
// own unique word, which is in argv, is seen in a process other than
// lifeloop (except for Pi, which replaces its command line with its
// process title at once, so only lifeloop's own shows it). Codex's
// launch profile file is gone from CODEX_HOME after the run.
//
// The last two cases are a Codex launch that chooses its own profile:
// opted in with --payload-argv-ok, the body goes on the command line and
// the poller must see the marker there (the control that proves it can
// fail); without it, the refusal: such a launch has no private channel
// (Codex layers one profile only), so the placement is refused with a
// one-line error naming --payload-argv-ok, exit 125, and nothing starts.
func TestPayloadNeverInArgv(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	tests := []struct {
		name string
		bin  func(t testing.TB) string
		// args are the harness's arguments; PROMPT is replaced by the
		// prompt with its unique word.
		args     []string
		kind     string
		retitles bool // the harness overwrites its own command line
		refused  bool
		// optIn runs with --payload-argv-ok where the body has no private
		// channel: the control, whose marker the poller must see.
		optIn bool
	}{
		{name: "claude", bin: testharness.ClaudeBin, args: []string{"-p", "PROMPT"}, kind: "claude"},
		{name: "codex", bin: testharness.CodexBin, args: []string{"exec", "--skip-git-repo-check", "PROMPT"}, kind: "codex"},
		{name: "opencode", bin: testharness.OpenCodeBin, args: []string{"run", "PROMPT"}, kind: "claude"},
		{name: "pi", bin: testharness.PiBin, args: []string{"-p", "PROMPT"}, kind: "claude", retitles: true},
		{name: "codex own profile opted in", bin: testharness.CodexBin, args: []string{"-p", "work", "exec", "--skip-git-repo-check", "PROMPT"}, kind: "codex", optIn: true},
		{name: "codex own profile refused", bin: testharness.CodexBin, args: []string{"-p", "work", "exec", "--skip-git-repo-check", "PROMPT"}, kind: "codex", refused: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := tc.bin(t)
			ll := lifeloopBin(t)
			mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
			env := testharness.NewHarnessEnv(t, mock)
			env.UseNodeFor(t, bin)
			state := stateDir(t)
			id := strings.ReplaceAll(tc.name, " ", "-")
			marker := "ARGV-PAYLOAD-MARKER-" + id + "-c41d"
			word := "promptword" + strconv.FormatInt(time.Now().UnixNano(), 36)
			pf := payloadFile(t, env.Dir, "pay_argv", marker)
			if err := os.WriteFile(filepath.Join(env.CodexHome, "work.config.toml"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			args := []string{"run", "--state-dir", state, "--tick", "0", "--payload", pf}
			if tc.optIn {
				args = append(args, "--payload-argv-ok")
			}
			args = append(args, "--", bin)
			for _, a := range tc.args {
				args = append(args, strings.ReplaceAll(a, "PROMPT", "say hello "+word))
			}

			w := watchCmdlines(marker, word)
			res := env.Run(runTimeout, ll, args...)
			seen, scans := w.stop()
			t.Logf("%d scans of /proc during the run", scans)
			if inArgv := len(seen[marker]) > 0; inArgv != tc.optIn {
				t.Errorf("the payload marker in a process's command line: %v, want %v (seen: %.300q)", inArgv, tc.optIn, seen[marker])
			}
			if tc.refused {
				msg := strings.TrimSpace(res.Stderr)
				if res.ExitCode != 125 || strings.Count(msg, "\n") != 0 || !strings.Contains(msg, "--payload-argv-ok") {
					t.Errorf("want exit 125 and one line naming --payload-argv-ok; got exit %d, stderr %q", res.ExitCode, res.Stderr)
				}
				if n := len(mock.Requests()); n != 0 {
					t.Errorf("the refused launch made %d model requests", n)
				}
				return
			}
			if res.ExitCode != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			if _, ok := anyRequestCarries(t, mock.RequestsOfKind(tc.kind), marker); !ok {
				t.Errorf("no %s model request carries the payload marker", tc.kind)
			}
			harnessSaw := false
			for _, c := range seen[word] {
				if !strings.HasPrefix(c, ll+" ") {
					harnessSaw = true
				}
			}
			if len(seen[word]) == 0 || !tc.retitles && !harnessSaw {
				t.Errorf("the poller never saw the prompt's word in a harness's command line (it saw %q): it cannot prove the marker's absence", seen[word])
			}
			left, _ := filepath.Glob(filepath.Join(env.CodexHome, adapters.PlacementFilePrefix+"*"))
			if len(left) > 0 {
				t.Errorf("launch placement files left in CODEX_HOME: %v", left)
			}
		})
	}
}
