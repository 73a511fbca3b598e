// Package pricing prices a model call's tokens: the embedded price table
// (built by `make prices` from the npm package @pydantic/genai-prices,
// pinned), a user's price file over it, and the provenance of every
// figure (docs/usage.md).
package pricing

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"
)

// The table built into lifeloop is prices.json as Go values
// (table_gen.go): a run that prices a call finds it in the binary's data
// instead of decoding 240 KB of JSON.
//go:generate go run ../../scripts/pricestable.go -in prices.json -out table_gen.go

// Table is a price table: providers, their models and prices.
type Table struct {
	// Source, Version and Date say where the table comes from: the
	// package, its version and its publication date.
	Source    string     `json:"source"`
	Version   string     `json:"version"`
	Date      string     `json:"date"`
	License   string     `json:"license"`
	Providers []Provider `json:"providers"`
}

// Provider is a model provider of the table.
type Provider struct {
	ID string `json:"id"`
	// Match picks the provider from a model id when no provider is given.
	Match    *Match   `json:"match,omitempty"`
	Fallback []string `json:"fallback,omitempty"`
	Models   []Model  `json:"models"`
}

// Model is a model and its prices.
type Model struct {
	ID    string `json:"id"`
	Match Match  `json:"match"`
	// Prices are the model's prices; the first has no constraint, a later
	// one applies from its StartDate or in its daily StartTime–EndTime
	// window (the last that applies wins).
	Prices []Price `json:"prices"`
}

// Price is a model's price per million tokens of each kind; nil where the
// table names none (cache prices then fall back to the input price).
type Price struct {
	Input      *Rate  `json:"input,omitempty"`
	Output     *Rate  `json:"output,omitempty"`
	CacheRead  *Rate  `json:"cache_read,omitempty"`
	CacheWrite *Rate  `json:"cache_write,omitempty"`
	StartDate  string `json:"start_date,omitempty"`
	StartTime  string `json:"start_time,omitempty"`
	EndTime    string `json:"end_time,omitempty"`
}

// Rate is a price per million tokens, with long-context tiers: when a
// call's input (cache included) exceeds a tier's Start, the tier's price
// applies to all of that kind's tokens of the call.
type Rate struct {
	Base  float64
	Tiers []Tier
}

// Tier is a long-context price.
type Tier struct {
	Start int64   `json:"start"`
	Price float64 `json:"price"`
}

// UnmarshalJSON reads a number or {"base": n, "tiers": [...]}.
func (r *Rate) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var t struct {
			Base  float64 `json:"base"`
			Tiers []Tier  `json:"tiers"`
		}
		if err := json.Unmarshal(b, &t); err != nil {
			return err
		}
		r.Base, r.Tiers = t.Base, t.Tiers
		return nil
	}
	return json.Unmarshal(b, &r.Base)
}

// MarshalJSON writes a number when r has no tiers.
func (r Rate) MarshalJSON() ([]byte, error) {
	if len(r.Tiers) == 0 {
		return json.Marshal(r.Base)
	}
	return json.Marshal(struct {
		Base  float64 `json:"base"`
		Tiers []Tier  `json:"tiers"`
	}{r.Base, r.Tiers})
}

// per returns the price per million tokens for a call of input tokens.
func (r *Rate) per(input int64) float64 {
	p := r.Base
	for _, t := range r.Tiers {
		if input > t.Start {
			p = t.Price
		}
	}
	return p
}

// Match is the dataset's match rule of a model or provider id
// (case-insensitive, regex excepted).
type Match struct {
	Or         []Match `json:"or,omitempty"`
	And        []Match `json:"and,omitempty"`
	Equals     *string `json:"equals,omitempty"`
	StartsWith *string `json:"starts_with,omitempty"`
	EndsWith   *string `json:"ends_with,omitempty"`
	Contains   *string `json:"contains,omitempty"`
	Regex      *string `json:"regex,omitempty"`
}

// matches reports whether id (lower case) matches m.
func (m *Match) matches(id string) bool {
	switch {
	case m.Or != nil:
		for i := range m.Or {
			if m.Or[i].matches(id) {
				return true
			}
		}
		return false
	case m.And != nil:
		for i := range m.And {
			if !m.And[i].matches(id) {
				return false
			}
		}
		return true
	case m.Equals != nil:
		return id == strings.ToLower(*m.Equals)
	case m.StartsWith != nil:
		return strings.HasPrefix(id, strings.ToLower(*m.StartsWith))
	case m.EndsWith != nil:
		return strings.HasSuffix(id, strings.ToLower(*m.EndsWith))
	case m.Contains != nil:
		return strings.Contains(id, strings.ToLower(*m.Contains))
	case m.Regex != nil:
		re := compiled(*m.Regex)
		return re.re != nil && re.re.MatchString(id) && (re.not == nil || !re.not.MatchString(id))
	}
	return false
}

// rule is a regex rule compiled: re must match and not, when set, must
// not (the rule's leading lookahead).
type rule struct{ re, not *regexp.Regexp }

// rules holds the regex rules compiled so far, by pattern: a rule is
// compiled when an id is first matched against it, so a run that prices
// a few models compiles a few of the table's rules.
var rules sync.Map

// compiled is the rule of pattern; a pattern that does not compile
// matches nothing (TestEveryRuleCompiles keeps the table's compiling).
func compiled(pattern string) rule {
	if r, ok := rules.Load(pattern); ok {
		return r.(rule)
	}
	r, _ := compileRule(pattern)
	rules.Store(pattern, r)
	return r
}

// CheckRule reports why a regex rule of the table would match nothing
// (it does not compile as lifeloop reads it), nil when it compiles.
func CheckRule(pattern string) error {
	_, err := compileRule(pattern)
	return err
}

func compileRule(pattern string) (rule, error) {
	var r rule
	p := pattern
	if inner, rest, ok := leadingLookahead(p); ok {
		not, err := regexp.Compile("^(?:" + inner + ")")
		if err != nil {
			return rule{}, err
		}
		r.not, p = not, "^"+rest
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return rule{}, err
	}
	r.re = re
	return r, nil
}

// Embedded returns the table built into lifeloop, shared by every
// caller: not to be changed.
func Embedded() *Table { return &embeddedTable }

// Models counts the table's models.
func (t *Table) Models() int {
	n := 0
	for _, p := range t.Providers {
		n += len(p.Models)
	}
	return n
}

// leadingLookahead splits a pattern "^(?!inner)rest" — the one
// lookahead the dataset's rules use, which Go's regular expressions lack
// — into inner and rest.
func leadingLookahead(p string) (inner, rest string, ok bool) {
	if !strings.HasPrefix(p, "^(?!") {
		return "", "", false
	}
	depth := 1
	for i := 4; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return p[4:i], p[i+1:], true
			}
		}
	}
	return "", "", false
}
