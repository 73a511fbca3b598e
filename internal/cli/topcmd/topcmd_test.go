package topcmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/cli"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/top"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// TestOpen: ended sessions within top.DefaultRecent only, unless All;
// --json rows are a list (never null); the --once table has no colour
// where the output is no terminal.
func TestOpen(t *testing.T) {
	root := t.TempDir()
	open := func(all bool) cli.TopView {
		t.Helper()
		v, err := Open(cli.TopParams{Root: root, Now: func() time.Time { return now }, All: all})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	rowsJSON := func(v cli.TopView) string {
		t.Helper()
		b, err := json.Marshal(v.Rows())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if got := rowsJSON(open(false)); got != "[]" {
		t.Errorf("no sessions: rows %s, want []", got)
	}

	const old, recent = "ses_01TESTTOPCMD00000000001", "ses_01TESTTOPCMD00000000002"
	started := now.Add(-3 * time.Hour)
	for id, ended := range map[string]time.Time{old: now.Add(-2 * time.Hour), recent: now.Add(-time.Minute)} {
		if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateCompleted, StartedAt: &started, EndedAt: &ended}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		all  bool
		want []string
	}{{false, []string{recent}}, {true, []string{recent, old}}} {
		v := open(c.all)
		rows, _ := v.Rows().([]top.Row)
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if strings.Join(ids, " ") != strings.Join(c.want, " ") {
			t.Errorf("all=%v: rows %v, want %v", c.all, ids, c.want)
		}
		var b bytes.Buffer
		if err := v.WriteTable(&b, 100); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(b.String(), "lifeloop top: 0 live, ") || strings.Contains(b.String(), "\x1b[") {
			t.Errorf("all=%v: table %q", c.all, b.String())
		}
	}
}
