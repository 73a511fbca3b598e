package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/fleet"
)

// TestFleetKeysSayWhyNot: the live fleet view's keys answer at once,
// without the broker, when a command cannot go: a session whose machine
// is not known, no fleet secret, a payload envelope for a renewal (a
// fleet renewal carries a note only), a note over the bound.
func TestFleetKeysSayWhyNot(t *testing.T) {
	dir := t.TempDir()
	e := &env{Streams: Streams{Now: time.Now, Getenv: func(string) string { return "" }}}
	rows := &fleetRows{byID: map[string]string{"ses_known": "m1", "ses_lost": "unknown"}}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		a    fleetActions
		call func(fleetActions) error
		want string
	}{
		{"unknown session", fleetActions{e: e, rows: rows, secret: []byte("s")}, func(a fleetActions) error {
			_, err := a.Control(ctx, "ses_other", "abort")
			return err
		}, "machine is not known"},
		{"machine unknown", fleetActions{e: e, rows: rows, secret: []byte("s")}, func(a fleetActions) error {
			_, err := a.Control(ctx, "ses_lost", "pause")
			return err
		}, "machine is not known"},
		{"no secret", fleetActions{e: e, rows: rows}, func(a fleetActions) error {
			_, err := a.Control(ctx, "ses_known", "abort")
			return err
		}, "no fleet secret"},
		{"payload envelope", fleetActions{e: e, rows: rows, secret: []byte("s")}, func(a fleetActions) error {
			p := filepath.Join(dir, "payload.json")
			if err := os.WriteFile(p, []byte(`{"payload_id":"p1"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := a.Renew(ctx, "ses_known", []string{p}, false)
			return err
		}, "not a payload envelope"},
		{"note too long", fleetActions{e: e, rows: rows, secret: []byte("s")}, func(a fleetActions) error {
			p := filepath.Join(dir, "note.md")
			if err := os.WriteFile(p, []byte(strings.Repeat("x", fleet.MaxNote+1)), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := a.Renew(ctx, "ses_known", []string{p}, true)
			return err
		}, "bytes at most"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(c.a); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%v, want %q", err, c.want)
			}
		})
	}
}

// TestFleetTitleSaysTheBroker: the title's end says whether the broker
// answers, and keeps the rows' note when it does not.
func TestFleetTitleSaysTheBroker(t *testing.T) {
	now := time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC)
	s := &fleetRows{now: func() time.Time { return now }, where: "fleet amqp://b/ · queue q"}
	if w := s.Where(); !strings.HasSuffix(w, "connecting") {
		t.Errorf("before a probe: %q", w)
	}
	s.probed, s.backlog = true, fleet.Backlog{Ready: 12, Consumers: 1}
	if w := s.Where(); !strings.HasSuffix(w, "12 waiting") {
		t.Errorf("with a backlog: %q", w)
	}
	s.backlog.Ready = 0
	if w := s.Where(); !strings.HasSuffix(w, "caught up") {
		t.Errorf("caught up: %q", w)
	}
	s.downAt, s.downErr = now.Add(-12*time.Second), shortErr(errors.New("connect to amqp://b/: dial tcp 127.0.0.1:1: connection refused"))
	if w := s.Where(); !strings.Contains(w, "broker not answering for 12s (connection refused); rows as last read") {
		t.Errorf("broker away: %q", w)
	}
}
