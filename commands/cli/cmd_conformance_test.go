package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/exitcode"
)

// corpusDir is the contract's conformance corpus.
var corpusDir = filepath.Join("..", "..", "contract", "testdata", "conformance")

// conformanceMain runs Main in-process and returns the exit code and output.
func conformanceMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Main(append([]string{"lifeloop"}, args...), Streams{
		In: strings.NewReader(""), Out: &out, Err: &errOut,
		Getenv: func(string) string { return "" },
		Now:    func() time.Time { return time.Unix(1778100000, 0) },
	})
	return code, out.String(), errOut.String()
}

// corpusCase is the part of a case file this test reads.
type corpusCase struct {
	Expect      string `json:"expect"`
	ExpectError string `json:"expect_error"`
}

// TestConformanceCorpus runs `lifeloop conformance` over the whole
// corpus: every case must pass, and every invalid case must be rejected
// with its expected error.
func TestConformanceCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no conformance cases in %s", corpusDir)
	}
	code, stdout, stderr := conformanceMain(t, "conformance", corpusDir)
	if code != exitcode.OK {
		t.Errorf("exit code %d, want 0; stderr: %s", code, stderr)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		verdict, rest, _ := strings.Cut(l, " ")
		name, detail, _ := strings.Cut(rest, ": ")
		lines[name] = verdict + " " + detail
	}
	invalid := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			line, ok := lines[f]
			if !ok {
				t.Fatalf("no output line for %s in:\n%s", f, stdout)
			}
			c := readCorpusCase(t, f)
			switch c.Expect {
			case "valid":
				if line != "PASS valid as expected" {
					t.Errorf("got %q, want PASS valid as expected", line)
				}
			case "invalid":
				invalid++
				if !strings.HasPrefix(line, "PASS invalid as expected: ") {
					t.Errorf("got %q, want PASS invalid as expected", line)
				}
				if !strings.Contains(strings.TrimPrefix(line, "PASS invalid as expected: "), c.ExpectError) {
					t.Errorf("got %q, want the error to contain %q", line, c.ExpectError)
				}
			default:
				t.Errorf("case has expect %q", c.Expect)
			}
		})
	}
	if invalid == 0 {
		t.Error("the corpus has no invalid cases")
	}
}

// TestConformanceCorpusFlipped flips every corpus case's expectation:
// the command must then report every case as FAIL and exit 1, which
// proves it tells an accepted document from a rejected one.
func TestConformanceCorpusFlipped(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no conformance cases in %s (%v)", corpusDir, err)
	}
	dir := t.TempDir()
	for _, f := range files {
		var c map[string]json.RawMessage
		if err := json.Unmarshal(readCaseFile(t, f), &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		switch string(c["expect"]) {
		case `"valid"`:
			c["expect"] = json.RawMessage(`"invalid"`)
		case `"invalid"`:
			c["expect"] = json.RawMessage(`"valid"`)
			delete(c, "expect_error")
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, _ := conformanceMain(t, "conformance", dir)
	if code != exitcode.Failed {
		t.Errorf("exit code %d, want %d", code, exitcode.Failed)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		n++
		if !strings.HasPrefix(l, "FAIL ") {
			t.Errorf("flipped case not reported as FAIL: %s", l)
		}
	}
	if n != len(files) {
		t.Errorf("%d output lines for %d files", n, len(files))
	}
}

func readCorpusCase(t *testing.T, name string) corpusCase {
	t.Helper()
	var c corpusCase
	if err := json.Unmarshal(readCaseFile(t, name), &c); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return c
}

func readCaseFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
