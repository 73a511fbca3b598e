package contract

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var docExample = regexp.MustCompile("(?s)<!-- example: (\\S+) -->\n```json\n(.*?)\n```")

// TestDocExamplesAreTestedFiles checks that every JSON example in
// docs/contract.md is byte-for-byte one of the example files, which
// TestExamplesRoundTrip and the golden tests exercise.
func TestDocExamplesAreTestedFiles(t *testing.T) {
	doc, err := os.ReadFile("../docs/contract.md")
	if err != nil {
		t.Fatal(err)
	}
	matches := docExample.FindAllSubmatch(doc, -1)
	if len(matches) < 9 {
		t.Fatalf("found %d marked examples in docs/contract.md", len(matches))
	}
	if n := strings.Count(string(doc), "```json"); n != len(matches) {
		t.Fatalf("%d json blocks but %d are marked as example files", n, len(matches))
	}
	for _, m := range matches {
		path := string(m[1])
		t.Run(filepath.Base(path), func(t *testing.T) {
			if !strings.HasPrefix(path, "contract/testdata/examples/") {
				t.Fatalf("example %s is not under contract/testdata/examples", path)
			}
			file, err := os.ReadFile(filepath.Join("..", path))
			if err != nil {
				t.Fatal(err)
			}
			if strings.TrimRight(string(file), "\n") != string(m[2]) {
				t.Fatalf("docs/contract.md block differs from %s", path)
			}
		})
	}
}
