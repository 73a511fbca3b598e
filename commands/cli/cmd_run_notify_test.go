package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// runNotifyFlags runs `lifeloop run` in-process with args and returns its
// exit code, standard output and standard error.
func runNotifyFlags(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	environ := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(dir, "home"), "LIFELOOP_STATE_DIR=" + filepath.Join(dir, "state"),
		"LIFELOOP_NOTIFY_SECRET=s3cret"}
	code := Main(append([]string{"lifeloop", "run", "--tick", "0"}, args...),
		Streams{In: strings.NewReader(""), Out: &out, Err: &errOut, Environ: environ, Dir: dir})
	return code, out.String(), errOut.String()
}

func TestRunNotifyFlagsAreCheckedBeforeLaunch(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  [2]string
		want string
	}{
		{args: []string{"--notify-on", "needs_permission,bogus"}, want: `--notify-on: unknown kind "bogus"; use a comma-separated list of needs_permission, needs_answer, waiting_for_input, stopped_on_error`},
		{env: [2]string{"LIFELOOP_NOTIFY_ON", "working"}, want: `--notify-on: unknown kind "working"`},
		{args: []string{"--notify-webhook", "127.0.0.1:9/hook"}, want: `--notify-webhook: webhook "<unparsable URL>": want an http:// or https:// URL`},
		{args: []string{"--notify-webhook", "ftp://example.com/x?token=tok3n"}, want: "want an http:// or https:// URL"},
		{env: [2]string{"LIFELOOP_NOTIFY_WEBHOOK", "mailto:me@example.com"}, want: "--notify-webhook: "},
	} {
		t.Run(strings.Join(append(tc.args, tc.env[:]...), " "), func(t *testing.T) {
			if tc.env[0] != "" {
				t.Setenv(tc.env[0], tc.env[1])
			}
			code, stdout, stderr := runNotifyFlags(t, append(tc.args, "--", "sh", "-c", "echo harness ran")...)
			if code != exitcode.Usage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, exitcode.Usage, tc.want)
			}
			if strings.Contains(stdout, "harness ran") {
				t.Error("the harness ran")
			}
			if strings.Contains(stderr, "tok3n") {
				t.Errorf("the error shows the URL's query: %q", stderr)
			}
		})
	}
}

func TestRunNotifyFlagsMakeTheConfig(t *testing.T) {
	environ := []string{"PATH=/bin"}
	cfg, err := notifyOptions{Command: "notify-me", Webhook: "https://hooks.example.com/h", Secret: "s",
		Desktop: true, On: "needs_answer, stopped_on_error"}.config(environ)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Command != "notify-me" || cfg.WebhookURL != "https://hooks.example.com/h" || cfg.WebhookSecret != "s" ||
		!cfg.Desktop || !slices.Equal(cfg.Kinds, []string{"needs_answer", "stopped_on_error"}) || !slices.Equal(cfg.Env, environ) {
		t.Fatalf("config %+v", cfg)
	}
	cfg, err = notifyOptions{}.config(nil)
	if err != nil || cfg.Enabled() {
		t.Fatalf("no flags: %+v, %v; want nothing enabled", cfg, err)
	}
}

func TestRunHelpWarnsOfASecretOnTheCommandLine(t *testing.T) {
	var out bytes.Buffer
	Main([]string{"lifeloop", "run", "--help"}, Streams{Out: &out, Err: &out})
	for _, s := range []string{"--notify CMD", "--notify-webhook URL", "--notify-secret SECRET", "visible to every local user in ps",
		"--notify-desktop", "--notify-on KINDS", "$LIFELOOP_NOTIFY_ON"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("run --help lacks %q", s)
		}
	}
}

func TestRunWithNotifyFlagsRunsTheHarness(t *testing.T) {
	code, stdout, stderr := runNotifyFlags(t, "--notify", "true", "--notify-on", "needs_permission",
		"--notify-webhook", "http://127.0.0.1:9/hook", "--", "sh", "-c", `echo "harness ran [$LIFELOOP_NOTIFY_SECRET]"`)
	if code != 0 || !strings.Contains(stdout, "harness ran") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want the harness's run", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "harness ran []") {
		t.Errorf("the harness got the webhook's secret: %q", stdout)
	}
}
