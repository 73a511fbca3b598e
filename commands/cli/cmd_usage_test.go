package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/commands/cli"
	"github.com/lifeloop/lifeloop/internal/usage"
)

// runUsage runs `lifeloop usage args...` with a temporary HOME.
func runUsage(t *testing.T, home string, args ...string) (code int, out, errOut string) {
	t.Helper()
	var o, e strings.Builder
	code = cli.Main(append([]string{"lifeloop", "usage"}, args...), cli.Streams{
		In: strings.NewReader(""), Out: &o, Err: &e,
		Environ: []string{"HOME=" + home, "LIFELOOP_STATE_DIR=" + filepath.Join(home, "state")},
	})
	return code, o.String(), e.String()
}

func TestUsageRefusesWhatItCannotGroupOrFilter(t *testing.T) {
	home := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--by", "day,week"}, `--by "week": give one of day, harness, project, session, model`},
		{[]string{"--since", "yesterday"}, `--since "yesterday": give a date as YYYY-MM-DD`},
		{[]string{"extra"}, "usage takes no arguments"},
	} {
		code, _, errOut := runUsage(t, home, c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("usage %v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestUsageWithNoSessionsPrintsAnEmptyReport(t *testing.T) {
	home := t.TempDir()
	code, out, errOut := runUsage(t, home, "--json")
	if code != 0 || errOut != "" || !strings.Contains(out, `"rows": []`) || !strings.Contains(out, `"cost_usd": null`) {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "state", "usage", usage.IndexFile)); err != nil {
		t.Fatalf("no index: %v", err)
	}
}

func TestUsageRefusesADamagedPriceFile(t *testing.T) {
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".config", "lifeloop"), 0o700)
	os.WriteFile(filepath.Join(home, ".config", "lifeloop", "prices.json"), []byte("{"), 0o600)
	code, _, errOut := runUsage(t, home)
	if code == 0 || !strings.Contains(errOut, "prices.json is not a price file") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
}
