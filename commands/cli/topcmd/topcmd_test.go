package topcmd

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/commands/cli"
	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// TestOpen: the live view opens over the state directory and reports a
// session it cannot read as a problem (which `top` prints as a warning).
// The rows and the --once table are commands/topview's, printed by
// lifeloop itself (testdata/script/top_once.txtar in commands/cli).
func TestOpen(t *testing.T) {
	root := t.TempDir()
	const bad = "ses_01TESTTOPCMD00000000003"
	if err := os.MkdirAll(statedir.SessionDir(root, bad), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(statedir.SessionDir(root, bad), statedir.SessionFile), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := Open(cli.TopParams{Root: root, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if p := v.Problems(); p[bad] == "" {
		t.Errorf("problems %v, want one for %s", p, bad)
	}
}

// emptyLister lists no session.
type emptyLister struct{}

func (emptyLister) Stamp() string { return "" }
func (emptyLister) List(context.Context) ([]topview.Row, []error) {
	return nil, nil
}

// TestOpenWithExternal: with a lister of the sessions harnesses run of
// their own accord, the live view's rows are the state directory's with
// that listing merged in (topview.ExternalRows), and the state
// directory's problems are still reported.
func TestOpenWithExternal(t *testing.T) {
	root := t.TempDir()
	v, err := Open(cli.TopParams{Root: root, Now: func() time.Time { return now }, External: emptyLister{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := v.(*view).src.(*topview.ExternalRows); !ok {
		t.Errorf("the live view's rows are %T, want the external listing merged in", v.(*view).src)
	}
	if p := v.Problems(); len(p) != 0 {
		t.Errorf("problems %v", p)
	}
}
