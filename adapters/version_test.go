package adapters

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"2.1.197", "2.1.330", -1},
		{"2.1.330", "2.1.330", 0},
		{"2.10.0", "2.9.9", 1},
		{"0.169", "0.169.0", 0},
		{"1.0.0-beta.1", "1.0.0", 0},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
	src := VersionSource{NewestProven: "2.1.330"}
	if UnprovenVersion("x", "2.1.330", src) != "" || UnprovenVersion("x", "", src) != "" {
		t.Error("a proven or unknown version reported as drift")
	}
	if UnprovenVersion("x", "2.1.331", src) == "" {
		t.Error("a newer version not reported")
	}
	// A known change is named from its first release on; the newest
	// change a version carries is the one named.
	src.Changes = []VersionChange{{Since: "3.0.0", What: "three"}, {Since: "3.2.0", What: "three-two"}}
	for v, want := range map[string]string{"2.9.0": "incomplete", "3.0.0": "three", "3.1.9": "three", "3.2.0": "three-two", "4.0.0": "three-two"} {
		if got := UnprovenVersion("x", v, src); !strings.HasSuffix(got, want) {
			t.Errorf("UnprovenVersion(%q) = %q, want it to end in %q", v, got, want)
		}
	}
}

// TestHarnessOutputSkipsRelativePath: a PATH entry that is not absolute
// names the current folder, which the launch refuses; a version read
// must not run a program found only there.
func TestHarnessOutputSkipsRelativePath(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "harness"), []byte("#!/bin/sh\necho 9.9.9\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"sub", "./sub", ":sub"} {
		if out, err := HarnessOutput(t.Context(), []string{"harness"}, nil, path, []string{"--version"}); err == nil {
			t.Errorf("PATH %q: ran sub/harness (%q)", path, out)
		}
	}
	abs := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(abs, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(abs, "harness"), []byte("#!/bin/sh\necho 1.2.3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := ReadVersion(t.Context(), []string{"harness"}, nil, ".:"+abs, VersionSource{Args: []string{"--version"}}); got != "1.2.3" {
		t.Errorf("version %q, want 1.2.3 from the absolute PATH entry", got)
	}
}

// TestPackageVersionSuccessor: a harness installed under the name it moved
// to is read from the successor's package.json.
func TestPackageVersionSuccessor(t *testing.T) {
	src := VersionSource{Package: "@old/agent", Successor: "@new/agent"}
	for _, name := range []string{"@old/agent", "@new/agent", "@other/agent"} {
		pkg := filepath.Join(t.TempDir(), "node_modules", name)
		if err := os.MkdirAll(filepath.Join(pkg, "dist"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"`+name+`","version":"1.5.2"}`), 0o600); err != nil {
			t.Fatal(err)
		}
		cli := filepath.Join(pkg, "dist", "cli.js")
		if err := os.WriteFile(cli, []byte("#!/bin/sh\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		want := "1.5.2"
		if name == "@other/agent" {
			want = ""
		}
		if got := PackageVersion([]string{cli}, "", src); got != want {
			t.Errorf("%s: version %q, want %q", name, got, want)
		}
	}
}
