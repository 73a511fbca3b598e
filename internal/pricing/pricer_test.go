package pricing

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var day = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestEmbeddedTableNamesItsSource(t *testing.T) {
	tb := Embedded()
	if tb.Source != "npm @pydantic/genai-prices" || tb.Version == "" || tb.Date == "" || tb.Models() < 100 {
		t.Fatalf("table %q %q %q with %d models", tb.Source, tb.Version, tb.Date, tb.Models())
	}
}

func TestCostOfAClaudeCallWithCacheAndLongContext(t *testing.T) {
	p, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	// claude-sonnet-4-5: input 3, cache write 3.75, cache read 0.3,
	// output 15 per million; above 200k input 6, 7.5, 0.6, 22.5.
	usd, ok := p.Cost("", "claude-sonnet-4-5-20250929", day, Tokens{Input: 1000, CacheWrite: 2000, CacheRead: 10000, Output: 500})
	if !ok || !near(usd, (1000*3+2000*3.75+10000*0.3+500*15)/1e6) {
		t.Fatalf("cost %v %v", usd, ok)
	}
	usd, ok = p.Cost("", "claude-sonnet-4-5-20250929", day, Tokens{Input: 1000, CacheRead: 200000, Output: 500})
	if !ok || !near(usd, (1000*6+200000*0.6+500*22.5)/1e6) {
		t.Fatalf("long-context cost %v %v", usd, ok)
	}
}

func TestUnknownModelHasNoCost(t *testing.T) {
	p, _ := New("")
	if usd, ok := p.Cost("", "mock-model-7", day, Tokens{Input: 10, Output: 5}); ok {
		t.Fatalf("an unpriced model cost %v", usd)
	}
}

func TestUserFileOverridesAndAdds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(path, []byte(`{"models":{"mock-model":{"input":2,"output":4},"claude-sonnet-4-5":{"input":1,"output":1}}}`), 0o600)
	p, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	if usd, ok := p.Cost("", "mock-model-7", day, Tokens{Input: 1_000_000, CacheRead: 1_000_000, Output: 1_000_000}); !ok || !near(usd, 2+2+4) {
		t.Fatalf("added model cost %v %v", usd, ok)
	}
	if usd, ok := p.Cost("", "claude-sonnet-4-5-20250929", day, Tokens{Input: 1_000_000, Output: 1_000_000}); !ok || !near(usd, 2) {
		t.Fatalf("overridden model cost %v %v", usd, ok)
	}
	if fp, _ := New(""); fp.Fingerprint() == p.Fingerprint() {
		t.Fatal("the user's prices do not change the fingerprint")
	}
}

func TestDamagedUserFileIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prices.json")
	os.WriteFile(path, []byte(`{"models":`), 0o600)
	if _, err := New(path); err == nil {
		t.Fatal("a damaged price file was accepted")
	}
}

func TestGPTModelsFindTheirProvider(t *testing.T) {
	p, _ := New("")
	for _, m := range []string{"gpt-5", "openai/gpt-5", "gemini-2.5-pro"} {
		if _, ok := p.Lookup("", m, day); !ok {
			t.Errorf("%s has no price", m)
		}
	}
}

// The table in the binary is prices.json, value for value: a table
// rebuilt by `make prices` and not generated again fails here.
func TestGeneratedTableIsTheJSON(t *testing.T) {
	b, err := os.ReadFile("prices.json")
	if err != nil {
		t.Fatal(err)
	}
	var want Table
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(Embedded(), &want) {
		t.Fatal("table_gen.go is not prices.json: run `go generate ./internal/pricing`")
	}
	if got := embeddedInfo(); got != (Info{Source: want.Source, Version: want.Version, Date: want.Date, License: want.License}) {
		t.Fatalf("info %+v", got)
	}
}

// Every regex rule of the table compiles (a rule that does not matches
// nothing).
func TestEveryRuleCompiles(t *testing.T) {
	var walk func(m *Match)
	n := 0
	walk = func(m *Match) {
		if m.Regex != nil {
			n++
			if _, err := compileRule(*m.Regex); err != nil {
				t.Errorf("rule %q: %v", *m.Regex, err)
			}
		}
		for i := range m.Or {
			walk(&m.Or[i])
		}
		for i := range m.And {
			walk(&m.And[i])
		}
	}
	for _, p := range Embedded().Providers {
		if p.Match != nil {
			walk(p.Match)
		}
		for i := range p.Models {
			walk(&p.Models[i].Match)
		}
	}
	if n == 0 {
		t.Fatal("no regex rule found: the walk reads nothing")
	}
}
