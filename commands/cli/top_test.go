package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// TestTopWithoutLifeloopTop: lifeloop links no terminal UI, and without a
// lifeloop-top beside it, on PATH or in $LIFELOOP_TOP_PROGRAM, the live
// `top` says in one line what to install and fails (--once and --json
// need no lifeloop-top: testdata/script/top_once.txtar).
func TestTopWithoutLifeloopTop(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var out, errOut bytes.Buffer
	code := Main([]string{"lifeloop", "top"}, Streams{
		In: strings.NewReader(""), Out: &out, Err: &errOut,
		Getenv: func(string) string { return "" },
	})
	const want = "lifeloop: lifeloop-top was found neither beside lifeloop nor on PATH (nor in $LIFELOOP_TOP_PROGRAM): install it with lifeloop (`make build` puts it beside lifeloop in bin/)\n"
	if code != exitcode.Failed || errOut.String() != want || out.Len() > 0 {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and stderr %q", code, out.String(), errOut.String(), exitcode.Failed, want)
	}
}
