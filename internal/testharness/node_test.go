package testharness

import (
	"os"
	"path/filepath"
	"testing"
)

func TestNodeSatisfies(t *testing.T) {
	for _, c := range []struct {
		v, rng string
		want   bool
	}{
		{"v20.20.2", ">=22.19.0", false},
		{"v22.19.0", ">=22.19.0", true},
		{"v22.18.9", ">=22.19.0", false},
		{"v26.10.0", ">=22.19.0", true},
		{"v20.20.2", ">=20.6.0", true},
		{"v20.20.2", ">= 20", true},
		{"v18.0.0", ">=20", false},
		{"v18.0.0", "", true},
		{"v18.0.0", "^22 || ^24", true}, // other forms: the harness decides
	} {
		if got := nodeSatisfies(c.v, c.rng); got != c.want {
			t.Errorf("nodeSatisfies(%q, %q) = %v, want %v", c.v, c.rng, got, c.want)
		}
	}
}

// TestEngineNode: the engines.node of the package above a symlinked
// executable, as npm links node_modules/.bin.
func TestEngineNode(t *testing.T) {
	root := t.TempDir()
	pkg := filepath.Join(root, "node_modules", "@scope", "tool")
	mustWrite(t, filepath.Join(pkg, "package.json"), `{"name":"@scope/tool","engines":{"node":">=22.19.0"}}`)
	mustWrite(t, filepath.Join(pkg, "dist", "bundle", "package.json"), `{"type":"module"}`)
	mustWrite(t, filepath.Join(pkg, "dist", "bundle", "cli.js"), "#!/usr/bin/env node\n")
	bin := filepath.Join(root, "node_modules", ".bin", "tool")
	if err := os.MkdirAll(filepath.Dir(bin), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../@scope/tool/dist/bundle/cli.js", bin); err != nil {
		t.Fatal(err)
	}
	if got, err := engineNode(bin); err != nil || got != ">=22.19.0" {
		t.Errorf("engineNode = %q, %v; want >=22.19.0", got, err)
	}
	plain := filepath.Join(root, "plain")
	mustWrite(t, plain, "")
	if got, err := engineNode(plain); err != nil || got != "" {
		t.Errorf("engineNode of a file in no package = %q, %v; want empty", got, err)
	}
}

func mustWrite(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
