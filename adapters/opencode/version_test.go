package opencode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// TestVersion2Unproven: OpenCode 2.x is not published to the npm
// registry, so its executable has no opencode-ai package.json above it;
// its --version is read, and a session of it is reported as unproven
// with what 2.x changed. The npm install of 1.18.33 is read from its
// package.json (the executable there fails if run) and is proven.
func TestVersion2Unproven(t *testing.T) {
	src := Harness{}.Version()
	bin := filepath.Join(t.TempDir(), "bin", "opencode")
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n[ \"$1\" = --version ] && echo 2.0.4 && exit 0\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{{bin, "run", "hi"}, {"opencode"}} {
		v := adapters.ReadVersion(t.Context(), argv, []string{"PATH=/usr/bin:/bin"}, filepath.Dir(bin), src)
		if v != "2.0.4" {
			t.Fatalf("%q: version %q, want 2.0.4 from --version", argv, v)
		}
		if e := adapters.UnprovenVersion("OpenCode", v, src); !strings.Contains(e, "2.0.4") || !strings.Contains(e, v2Change) {
			t.Errorf("evidence %q, want 2.0.4 reported with what 2.x changed", e)
		}
	}
	pkg := filepath.Join(t.TempDir(), "node_modules", "opencode-ai")
	if err := os.MkdirAll(filepath.Join(pkg, "bin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"opencode-ai","version":"1.18.33"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(pkg, "bin", "opencode.exe")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if v := adapters.ReadVersion(t.Context(), []string{exe}, nil, "", src); v != "1.18.33" || adapters.UnprovenVersion("OpenCode", v, src) != "" {
		t.Errorf("npm install: version %q, unproven %q; want 1.18.33, proven", v, adapters.UnprovenVersion("OpenCode", v, src))
	}
	// A 1.x newer than the proven one is unproven without the 2.x change.
	if e := adapters.UnprovenVersion("OpenCode", "1.19.0", src); e == "" || strings.Contains(e, v2Change) {
		t.Errorf("1.19.0: evidence %q", e)
	}
}
