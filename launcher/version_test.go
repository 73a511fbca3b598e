package launcher

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/ptyio"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestSessionStartedHarnessVersion: session.started names the version of
// the harness the launch starts (here read from the npm package.json
// above the executable), and a version newer than the newest proven one
// adds one capability.degraded right after it.
func TestSessionStartedHarnessVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		drift   bool
	}{{"2.1.330", false}, {"9.0.0", true}} {
		t.Run(tc.version, func(t *testing.T) {
			f := newFixture(t, "")
			pkg := filepath.Join(t.TempDir(), "node_modules", "@anthropic-ai", "claude-code")
			if err := os.MkdirAll(pkg, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@anthropic-ai/claude-code","version":"`+tc.version+`"}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cli := filepath.Join(pkg, "cli.js")
			if err := writeExecutable(cli, []byte("#!/bin/sh\necho hello\n")); err != nil {
				t.Fatal(err)
			}
			f.cfg.Adapter = adapters.AdapterOf(claude.Harness{})
			f.cfg.Record.AdapterID = "claude"
			f.cfg.Spec.Path, f.cfg.Spec.Args = cli, nil
			if res := f.run(t); res.ExitCode != 0 {
				t.Fatalf("exit %d", res.ExitCode)
			}
			started, _ := f.rec.last(contract.EventSessionStarted)
			if started.Summary["harness_version"] != tc.version {
				t.Errorf("session.started summary %v, want harness_version %s", started.Summary, tc.version)
			}
			// The recorder keeps every moment in order; only the version's
			// capability.degraded counts (the fixture may add others).
			f.rec.mu.Lock()
			ms := append([]Moment(nil), f.rec.moments...)
			f.rec.mu.Unlock()
			var drift []int
			for i, m := range ms {
				if m.Event == contract.EventCapabilityDegraded && m.Summary["reason"] == "harness_version_unproven" {
					drift = append(drift, i)
				}
			}
			if !tc.drift {
				if len(drift) != 0 {
					t.Errorf("capability.degraded for a proven version: %+v", ms[drift[0]])
				}
				return
			}
			if len(drift) != 1 || ms[drift[0]-1].Event != contract.EventSessionStarted {
				t.Fatalf("events %v, want one harness_version_unproven capability.degraded right after session.started", f.rec.events())
			}
			d := ms[drift[0]]
			if d.Summary["harness_version"] != "9.0.0" || len(d.Degradations) != 1 || d.Degradations[0].CurrentSupport != contract.SupportPartial {
				t.Errorf("capability.degraded %+v", d)
			}
		})
	}
}

// TestRelaunchRereadsVersion: a harness that updated itself between its
// start and a renewal's relaunch runs a new version; the relaunch reads
// it again, so the new unproven version is reported (once) although the
// first start's version was proven.
func TestRelaunchRereadsVersion(t *testing.T) {
	f := newFixture(t, "unused")
	ft := &fakeTerminal{}
	f.cfg.OpenTerminal = func(ptyio.TerminalConfig) (Terminal, error) { return ft, nil }
	pkg := filepath.Join(t.TempDir(), "node_modules", "@anthropic-ai", "claude-code")
	if err := os.MkdirAll(pkg, 0o700); err != nil {
		t.Fatal(err)
	}
	setVersion := func(v string) {
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@anthropic-ai/claude-code","version":"`+v+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	setVersion("2.1.330")
	cli := filepath.Join(pkg, "cli.js")
	if err := writeExecutable(cli, []byte("#!/bin/sh\n")); err != nil {
		t.Fatal(err)
	}
	f.cfg.Adapter = adapters.AdapterOf(claude.Harness{})
	f.cfg.Record.AdapterID = "claude"
	f.cfg.UserArgv = []string{cli}
	f.cfg.Spec = ptyio.ChildSpec{Path: cli, Env: []string{"PATH=/usr/bin:/bin"}}
	f.cfg.Grace = 300 * time.Millisecond
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })

	unproven := func() []Moment {
		f.rec.mu.Lock()
		defer f.rec.mu.Unlock()
		var out []Moment
		for _, m := range f.rec.moments {
			if m.Event == contract.EventCapabilityDegraded && m.Summary["reason"] == "harness_version_unproven" {
				out = append(out, m)
			}
		}
		return out
	}
	setVersion("9.0.0")
	if err := <-renewAsync(t, f, renewal.Request{Reason: "test"}); err != nil {
		t.Fatalf("renew: %v", err)
	}
	if ft.count() != 2 {
		t.Fatalf("%d harnesses started, want 2", ft.count())
	}
	ft.proc(1).exit(ptyio.ExitStatus{Code: 0})
	<-done
	got := unproven()
	if len(got) != 1 || got[0].Summary["harness_version"] != "9.0.0" {
		t.Fatalf("harness_version_unproven receipts %+v, want one for 9.0.0", got)
	}
}

// TestLateVersionReadReported: a harness with no package.json above it
// is asked its --version beside the loop, and the answer can come after
// session.started is recorded (here the --version run waits for the
// harness to have started). An unproven version read then is still
// reported, once, after session.started; before, it went unreported.
func TestLateVersionReadReported(t *testing.T) {
	f := newFixture(t, "")
	dir := t.TempDir()
	started, done := filepath.Join(dir, "started"), filepath.Join(dir, "done")
	cli := filepath.Join(dir, "claude")
	script := "#!/bin/sh\n" +
		"if [ \"$1\" = --version ]; then\n" +
		"  while [ ! -e " + started + " ]; do sleep 0.01; done\n" +
		"  echo '9.0.0 (Claude Code)'; exit 0\n" +
		"fi\n" +
		"touch " + started + "\n" +
		"while [ ! -e " + done + " ]; do sleep 0.01; done\n"
	if err := writeExecutable(cli, []byte(script)); err != nil {
		t.Fatal(err)
	}
	f.cfg.Adapter = adapters.AdapterOf(claude.Harness{})
	f.cfg.Record.AdapterID = "claude"
	f.cfg.Spec.Path, f.cfg.Spec.Args = cli, nil
	res := make(chan Result, 1)
	go func() { res <- f.run(t) }()
	unproven := func() (int, []Moment) {
		f.rec.mu.Lock()
		defer f.rec.mu.Unlock()
		ms := append([]Moment(nil), f.rec.moments...)
		for i, m := range ms {
			if m.Event == contract.EventCapabilityDegraded && m.Summary["reason"] == "harness_version_unproven" {
				return i, ms
			}
		}
		return -1, ms
	}
	testutil.WaitFor(t, func() bool { i, _ := unproven(); return i >= 0 })
	if err := os.WriteFile(done, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.ExitCode != 0 {
		t.Fatalf("exit %d", r.ExitCode)
	}
	i, ms := unproven()
	n := 0
	for _, m := range ms {
		if m.Event == contract.EventCapabilityDegraded && m.Summary["reason"] == "harness_version_unproven" {
			n++
		}
	}
	startedAt := -1
	for j, m := range ms {
		if m.Event == contract.EventSessionStarted {
			startedAt = j
			break
		}
	}
	if n != 1 || startedAt < 0 || i < startedAt || ms[i].Summary["harness_version"] != "9.0.0" {
		t.Fatalf("events %v, want one harness_version_unproven for 9.0.0 after session.started", f.rec.events())
	}
}
