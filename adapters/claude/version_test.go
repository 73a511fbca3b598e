package claude

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// fakeInstall writes an npm install of Claude Code at version v (a
// package.json and an executable cli.js that fails if run) and returns
// the path of its executable.
func fakeInstall(t *testing.T, v string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "node_modules", "@anthropic-ai", "claude-code")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"@anthropic-ai/claude-code","version":"`+v+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := filepath.Join(dir, "cli.js")
	if err := os.WriteFile(cli, []byte("#!/bin/sh\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return cli
}

func TestHarnessVersionFromPackage(t *testing.T) {
	cli := fakeInstall(t, "2.1.330")
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.Symlink(cli, bin); err != nil {
		t.Fatal(err)
	}
	if got := adapters.ReadVersion(t.Context(), []string{bin, "-p", "x"}, nil, "", Harness{}.Version()); got != "2.1.330" {
		t.Errorf("version through the .bin link %q, want 2.1.330", got)
	}
	if got := adapters.ReadVersion(t.Context(), []string{"claude"}, nil, filepath.Dir(bin), Harness{}.Version()); got != "2.1.330" {
		t.Errorf("version found on PATH %q, want 2.1.330", got)
	}
}

// A payload placed into a resumed conversation needs
// --system-prompt-snapshot off where Claude has the option (2.1.330),
// and must not get it where Claude rejects it (2.1.197) or when the
// conversation is new. The launch reads the facts (version, and --help
// for a release in between); PlaceAtLaunch only reads what it is handed
// (the executable here fails if run).
func TestPlaceAtLaunchResumedSnapshot(t *testing.T) {
	for _, tc := range []struct {
		facts  adapters.Facts
		resume bool
		want   bool
	}{
		{adapters.Facts{Version: "2.1.330"}, true, true},
		{adapters.Facts{Version: "2.2.0"}, true, true},
		{adapters.Facts{Version: "2.1.197"}, true, false},
		{adapters.Facts{Version: "2.1.330"}, false, false},
		{adapters.Facts{Version: "2.1.250", Help: "  " + snapshotFlag + " <mode>  ..."}, true, true},
		{adapters.Facts{Version: "2.1.250", Help: "no such option"}, true, false},
		{adapters.Facts{}, true, false},
	} {
		bin := fakeInstall(t, "9.9.9")
		argv := []string{bin}
		if tc.resume {
			argv = append(argv, "--resume", "3c9f4c1e-0000-4000-8000-000000000000")
		}
		h := Harness{}.WithFacts(tc.facts).(Harness)
		out, _, ok := h.PlaceAtLaunch(argv, 1, "payload")
		if !ok {
			t.Fatalf("%+v: not placed", tc.facts)
		}
		i := slices.Index(out, snapshotFlag)
		if got := i >= 0 && i+1 < len(out) && out[i+1] == "off"; got != tc.want {
			t.Errorf("%+v resume=%v: %q, want snapshot off %v", tc.facts, tc.resume, out, tc.want)
		}
	}
	// A command line that chooses the snapshot itself keeps its choice.
	bin := fakeInstall(t, "2.1.330")
	h := Harness{}.WithFacts(adapters.Facts{Version: "2.1.330"}).(Harness)
	out, _, _ := h.PlaceAtLaunch([]string{bin, "--resume", "x", snapshotFlag, "on"}, 1, "payload")
	if n := len(slices.DeleteFunc(slices.Clone(out), func(s string) bool { return s != snapshotFlag })); n != 1 {
		t.Errorf("%q: the user's --system-prompt-snapshot was not kept alone", out)
	}
}

// Only a version between the oldest proven one (2.1.197, no
// --system-prompt-snapshot) and the first with the option (2.1.330), or
// an unknown one, needs --help read.
func TestNeedsHelp(t *testing.T) {
	for v, want := range map[string]bool{"": true, "2.1.250": true, "2.1.197": false, "2.1.330": false, "2.3.0": false, "2.0.1": false} {
		if got := (Harness{}).NeedsHelp(v); got != want {
			t.Errorf("NeedsHelp(%q) = %v, want %v", v, got, want)
		}
	}
}
