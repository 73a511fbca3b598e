package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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
