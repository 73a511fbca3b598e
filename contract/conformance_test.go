package contract

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func corpusFiles(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/conformance/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 300 {
		t.Fatalf("conformance corpus has only %d files", len(files))
	}
	return files
}

func TestConformanceCorpus(t *testing.T) {
	for _, f := range corpusFiles(t) {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, err := ParseConformanceCase(data)
			if err != nil {
				t.Fatal(err)
			}
			if c.Expect == "invalid" && c.ExpectError == "" {
				t.Errorf("invalid case without expect_error: every refusal must name its reason")
			}
			if c.Description == "" {
				t.Errorf("case has no description")
			}
			ok, detail, err := CheckConformanceCase(data, fixedNow)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatalf("%s: %s", c.Description, detail)
			}
		})
	}
}

// TestConformanceCorpusCoversEveryEnumValue checks that each enum value of
// the contract appears in at least one valid case.
func TestConformanceCorpusCoversEveryEnumValue(t *testing.T) {
	var valid strings.Builder
	for _, f := range corpusFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ParseConformanceCase(data)
		if err != nil {
			t.Fatal(err)
		}
		if c.Expect == "valid" {
			valid.Write(c.Data)
		}
	}
	all := valid.String()
	lists := map[string][]string{
		"events": strs(Events), "support states": strs(SupportStates), "integration modes": strs(IntegrationModes),
		"roles": strs(AdapterRoles), "receipt statuses": strs(ReceiptStatuses), "placement outcomes": strs(PlacementOutcomes),
		"placement classes": strs(PlacementClasses), "manifest placement classes": strs(ManifestPlacementClasses),
		"requirement levels": strs(RequirementLevels), "frame classes": strs(FrameClasses),
		"failure classes": strs(FailureClasses), "retry classes": strs(RetryClasses), "content encodings": ContentEncodings,
	}
	for name, values := range lists {
		for _, v := range values {
			if !strings.Contains(all, `"`+v+`"`) {
				t.Errorf("%s: %q appears in no valid conformance case", name, v)
			}
		}
	}
}

func TestCheckConformanceCaseReportsMismatches(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		ok      bool
		wantErr bool
		detail  string
	}{
		{"expected invalid but valid", `{"kind":"capability_request","expect":"invalid","expect_error":"x","description":"d","data":{"client_id":"c"}}`, false, false, "accepted"},
		{"wrong error substring", `{"kind":"capability_request","expect":"invalid","expect_error":"nope","description":"d","data":{"client_id":""}}`, false, false, "expected an error containing"},
		{"expected valid but invalid", `{"kind":"capability_request","expect":"valid","description":"d","data":{"client_id":""}}`, false, false, "client_id"},
		{"match", `{"kind":"capability_request","expect":"valid","description":"d","data":{"client_id":"c"}}`, true, false, "valid"},
		{"unknown kind", `{"kind":"receipt","expect":"valid","description":"d","data":{}}`, false, true, ""},
		{"bad expect", `{"kind":"capability_request","expect":"ok","description":"d","data":{}}`, false, true, ""},
		{"unknown case key", `{"kind":"capability_request","expect":"valid","description":"d","data":{},"note":1}`, false, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ok, detail, err := CheckConformanceCase([]byte(tt.in), fixedNow)
			if (err != nil) != tt.wantErr || ok != tt.ok || !strings.Contains(detail, tt.detail) {
				t.Fatalf("ok=%v detail=%q err=%v", ok, detail, err)
			}
		})
	}
}
