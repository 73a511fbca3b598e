package builtin

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestGenericCodeNamesNoHarness is the layout's check: outside its own
// folder under adapters/, the registry (this package), tests and the
// test harness, no code or comment names a harness (its id, an alias, or
// a file format only it writes). A generic package asks the harness
// through the adapters interfaces instead. The one exception is OrgLoop's
// wire vocabulary of harness names in contract (seed 003).
func TestGenericCodeNamesNoHarness(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	words := []string{"rollout"}
	own := map[string]bool{"adapters/builtin": true}
	for _, a := range Default().All() {
		own["adapters/"+a.ID] = true
		if a.ID != "generic" {
			words = append(words, a.ID)
			words = append(words, a.Aliases...)
		}
	}
	// A name starts a word (CLAUDE_CONFIG_DIR and ClaudeParser count) and
	// ends one unless it goes on in letters (so "pi" does not match "pipe").
	names := regexp.MustCompile(`(?i)\b(` + strings.Join(words, "|") + `)(?:[^a-z]|$)`)
	orgLoopVocabulary := regexp.MustCompile(`^\s*Harness\w+\s+= "[a-z-]+"$`)
	generated := regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.\n`)
	checked := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if own[rel] || rel == "e2e" || rel == "internal/testharness" || rel == "harnesses" ||
				(strings.HasPrefix(d.Name(), ".") && rel != ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if generated.Match(b) {
			// Data written by a program from a dataset (the price
			// table's model ids), not code that names a harness.
			return nil
		}
		checked++
		for i, line := range strings.Split(string(b), "\n") {
			if rel == "contract/orgloop.go" && orgLoopVocabulary.MatchString(line) {
				continue
			}
			if m := names.FindString(line); m != "" {
				t.Errorf("%s:%d names a harness (%q); ask the harness through adapters instead: %s", rel, i+1, strings.TrimSpace(m), strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("only %d files checked; is the module root %s?", checked, root)
	}
}

// TestPluginsImportOnlyTheKit is the plug-in rule: the code of every
// folder under adapters/ but the registry's (tests aside, which may use
// the test harnesses) imports no other harness's folder, not the registry
// and nothing of lifeloop's internal/; what plug-ins share is in
// adapters/kit, which imports neither plug-ins nor internal/ itself.
func TestPluginsImportOnlyTheKit(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	const module = "github.com/lifeloop/lifeloop/"
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var folders []string // every harness's folder, registered or not, and the kit
	for _, e := range entries {
		if e.IsDir() && e.Name() != "builtin" {
			folders = append(folders, e.Name())
		}
	}
	if !slices.Contains(folders, "kit") {
		t.Fatalf("no adapters/kit under %s", root)
	}
	checked := 0
	for _, folder := range folders {
		err := filepath.WalkDir(filepath.Join(root, folder), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			rel, _ := filepath.Rel(root, p)
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if why := forbiddenImport(folder, strings.TrimPrefix(path, module), strings.HasPrefix(path, module)); why != "" {
					t.Errorf("adapters/%s imports %s: %s", filepath.ToSlash(rel), path, why)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d files checked; is adapters/ at %s?", checked, root)
	}
}

// forbiddenImport says why the code in adapters/<folder> may not import
// the package at path (relative to the module when ours), "" when it may.
func forbiddenImport(folder, path string, ours bool) string {
	switch {
	case !ours:
		return ""
	case path == "internal" || strings.HasPrefix(path, "internal/"):
		return "a plug-in and the kit use no internal package; move what they share into adapters/kit"
	case path == "adapters/"+folder || strings.HasPrefix(path, "adapters/"+folder+"/"):
		return ""
	case path == "adapters/kit" || strings.HasPrefix(path, "adapters/kit/"):
		return ""
	case strings.HasPrefix(path, "adapters/"):
		return "a plug-in imports no other plug-in nor the registry; share code through adapters/kit"
	}
	return ""
}

// TestForbiddenImport: the rule TestPluginsImportOnlyTheKit applies, on
// imports the tree does not have today.
func TestForbiddenImport(t *testing.T) {
	for _, tt := range []struct {
		folder, path string
		ours, bad    bool
	}{
		{"openclaw", "adapters/opencode", true, true},
		{"openclaw", "adapters/pi", true, true},
		{"pi", "adapters/builtin", true, true},
		{"kit", "adapters/pi", true, true},
		{"claude", "internal/statedir", true, true},
		{"kit", "internal/ids", true, true},
		{"pi", "adapters", true, false},
		{"pi", "adapters/kit", true, false},
		{"pi", "adapters/pi/sub", true, false},
		{"pi", "atomicfile", true, false},
		{"pi", "telemetry", true, false},
		{"pi", "github.com/fsnotify/fsnotify", false, false},
	} {
		if got := forbiddenImport(tt.folder, tt.path, tt.ours) != ""; got != tt.bad {
			t.Errorf("adapters/%s importing %s: forbidden %v, want %v", tt.folder, tt.path, got, tt.bad)
		}
	}
}
