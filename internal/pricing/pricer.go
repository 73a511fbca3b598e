package pricing

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Provenance says where a cost comes from.
type Provenance string

// The provenances of a cost.
const (
	// Native: the harness recorded the cost itself.
	Native Provenance = "native"
	// Estimated: lifeloop priced the tokens with its price table.
	Estimated Provenance = "estimated"
	// Unknown: the model has no price; the cost is never shown as 0.
	Unknown Provenance = "unknown"
)

// Tokens are a call's tokens by kind: Input without the cache.
type Tokens struct {
	Input, CacheRead, CacheWrite, Output int64
}

// Pricer prices calls: the user's prices first, then the table's. Safe
// for concurrent use.
type Pricer struct {
	// Info names the table (table_gen.go, the binary's data).
	Info Info
	// User are the user file's prices by model id or id prefix (lower
	// case); UserPath is the file ("" when none was read).
	User     map[string]Price
	UserPath string

	// found caches find's answers by provider and model id (a session
	// names few models, a machine's sessions a few dozen).
	mu    sync.Mutex // guards found
	found map[[2]string]*Model
}

// UserFile is the user's price file: $XDG_CONFIG_HOME/lifeloop/prices.json,
// else ~/.config/lifeloop/prices.json; "" when neither variable is set.
func UserFile(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "lifeloop", "prices.json")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "lifeloop", "prices.json")
	}
	return ""
}

// userFile is the shape of the user's price file.
type userFile struct {
	Models map[string]Price `json:"models"`
}

// Info is where a price table comes from.
type Info struct {
	Source  string `json:"source"`
	Version string `json:"version"`
	Date    string `json:"date"`
	License string `json:"license"`
}

// New returns the pricer of the embedded table with the user's file at
// path over it (none when path is "" or the file does not exist).
func New(path string) (*Pricer, error) {
	p := &Pricer{Info: embeddedInfo()}
	if path == "" {
		return p, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return p, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	var u userFile
	if err := json.Unmarshal(b, &u); err != nil {
		return nil, fmt.Errorf("pricing: %s is not a price file (%v); see docs/usage.md for its shape", path, err)
	}
	p.User = make(map[string]Price, len(u.Models))
	for k, v := range u.Models {
		if v.Input == nil && v.Output == nil {
			return nil, fmt.Errorf("pricing: %s: model %q has neither an input nor an output price", path, k)
		}
		p.User[strings.ToLower(strings.TrimSpace(k))] = v
	}
	p.UserPath = path
	return p, nil
}

// embeddedInfo is the embedded table's name.
func embeddedInfo() Info {
	t := &embeddedTable
	return Info{Source: t.Source, Version: t.Version, Date: t.Date, License: t.License}
}

// Table is the embedded table (shared: not to be changed).
func (p *Pricer) Table() *Table { return &embeddedTable }

// Fingerprint changes whenever the prices a pricer applies may change:
// the table's version and the user's prices.
func (p *Pricer) Fingerprint() string {
	keys := make([]string, 0, len(p.User))
	for k := range p.User {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(p.Info.Source + "@" + p.Info.Version)
	for _, k := range keys {
		v, _ := json.Marshal(p.User[k])
		b.WriteString("|" + k + "=" + string(v))
	}
	return b.String()
}

// Cost is the cost in US dollars of a call of model (from provider, ""
// when unknown) at time at; false when the model has no price.
func (p *Pricer) Cost(provider, model string, at time.Time, t Tokens) (float64, bool) {
	pr, ok := p.Lookup(provider, model, at)
	if !ok {
		return 0, false
	}
	return pr.cost(t)
}

// Lookup finds the price of model at time at: the user's first (the id,
// else the longest id prefix), then the table's.
func (p *Pricer) Lookup(provider, model string, at time.Time) (Price, bool) {
	r, ok := p.Find(provider, model)
	if !ok {
		return Price{}, false
	}
	return r.At(at), true
}

// Rates are a model's prices as Find found them, at every time.
type Rates struct {
	user  *Price // the user's price, which has no variants
	model *Model
}

// Find finds model's prices (Lookup's rules) once, for a caller that
// prices many calls of the same model: Rates.Cost then skips the search.
func (p *Pricer) Find(provider, model string) (Rates, bool) {
	id := strings.ToLower(strings.TrimSpace(model))
	if id == "" {
		return Rates{}, false
	}
	if pr, ok := p.User[id]; ok {
		return Rates{user: &pr}, true
	}
	best := ""
	for k := range p.User {
		if strings.HasPrefix(id, k) && len(k) > len(best) {
			best = k
		}
	}
	if best != "" {
		pr := p.User[best]
		return Rates{user: &pr}, true
	}
	key := [2]string{provider, id}
	p.mu.Lock()
	m, ok := p.found[key]
	if !ok {
		m = embeddedTable.find(strings.ToLower(provider), id)
		if p.found == nil {
			p.found = map[[2]string]*Model{}
		}
		p.found[key] = m
	}
	p.mu.Unlock()
	if m == nil {
		return Rates{}, false
	}
	return Rates{model: m}, true
}

// At is the price at time at.
func (r Rates) At(at time.Time) Price {
	if r.user != nil {
		return *r.user
	}
	return r.model.at(at)
}

// Cost is the cost in US dollars of a call at time at; false when a
// kind of its tokens has no price.
func (r Rates) Cost(at time.Time, t Tokens) (float64, bool) {
	return r.At(at).cost(t)
}

// dated matches a model id's date suffix written without dashes.
var dated = regexp.MustCompile(`-(20\d{2})(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(-|:|$)`)

// find finds model id the way the dataset's own library does: in the
// provider named (or, with a "provider/model" id, the one its prefix
// names), else in the first provider whose rule matches the id; in its
// fallback providers next; then once more with the id's date written
// with dashes.
func (t *Table) find(provider, id string) *Model {
	if provider == "" {
		if i := strings.IndexByte(id, '/'); i > 0 && t.provider(id[:i]) != nil {
			provider, id = id[:i], id[i+1:]
		}
	}
	var pv *Provider
	if provider != "" {
		pv = t.provider(provider)
	}
	if pv == nil {
		for i := range t.Providers {
			if m := t.Providers[i].Match; m != nil && m.matches(id) {
				pv = &t.Providers[i]
				break
			}
		}
	}
	if pv == nil {
		return nil
	}
	if m := t.inProvider(pv, id, true); m != nil {
		return m
	}
	if alt := dated.ReplaceAllString(id, "-$1-$2-$3$4"); alt != id {
		return t.inProvider(pv, alt, true)
	}
	return nil
}

func (t *Table) provider(id string) *Provider {
	for i := range t.Providers {
		if t.Providers[i].ID == id {
			return &t.Providers[i]
		}
	}
	return nil
}

func (t *Table) inProvider(pv *Provider, id string, fallback bool) *Model {
	for i := range pv.Models {
		if pv.Models[i].Match.matches(id) {
			return &pv.Models[i]
		}
	}
	if fallback {
		for _, f := range pv.Fallback {
			if fp := t.provider(f); fp != nil {
				if m := t.inProvider(fp, id, false); m != nil {
					return m
				}
			}
		}
	}
	return nil
}

// at is the model's price at time at (UTC): the last variant whose
// constraint holds, else the first.
func (m *Model) at(at time.Time) Price {
	at = at.UTC()
	for i := len(m.Prices) - 1; i >= 0; i-- {
		v := m.Prices[i]
		switch {
		case v.StartDate != "":
			d, err := time.Parse("2006-01-02", v.StartDate)
			if err == nil && !at.IsZero() && !at.Before(d) {
				return v
			}
		case v.StartTime != "" && v.EndTime != "":
			if inWindow(at, v.StartTime, v.EndTime) {
				return v
			}
		default:
			return v
		}
	}
	return m.Prices[0]
}

// inWindow reports whether at's time of day lies in [start, end) (which
// may wrap past midnight); times are "15:04:05Z".
func inWindow(at time.Time, start, end string) bool {
	s, err1 := time.Parse("15:04:05Z", start)
	e, err2 := time.Parse("15:04:05Z", end)
	if err1 != nil || err2 != nil || at.IsZero() {
		return false
	}
	day := func(t time.Time) int { return t.Hour()*3600 + t.Minute()*60 + t.Second() }
	n, a, b := day(at), day(s), day(e)
	if b < a {
		return n >= a || n < b
	}
	return n >= a && n < b
}

// cost prices t: cache tokens at their own price, else the input's;
// tiers chosen by the call's whole input. False when a kind of token the
// call has is not priced.
func (pr Price) cost(t Tokens) (float64, bool) {
	in := t.Input + t.CacheRead + t.CacheWrite
	usd := 0.0
	part := func(n int64, r, fallback *Rate) bool {
		if n == 0 {
			return true
		}
		if r == nil {
			r = fallback
		}
		if r == nil {
			return false
		}
		usd += float64(n) * r.per(in) / 1e6
		return true
	}
	ok := part(t.Input, pr.Input, nil) &&
		part(t.CacheRead, pr.CacheRead, pr.Input) &&
		part(t.CacheWrite, pr.CacheWrite, pr.Input) &&
		part(t.Output, pr.Output, nil)
	return usd, ok
}

// JoinProvenance joins provenances, each possibly already joined
// ("estimated", "native+unknown"), in the order native, estimated,
// unknown: what a sum of costs of those provenances is.
func JoinProvenance(ps ...string) string {
	have := map[string]bool{}
	for _, p := range ps {
		for _, k := range strings.Split(p, "+") {
			have[k] = true
		}
	}
	var out []string
	for _, k := range []Provenance{Native, Estimated, Unknown} {
		if have[string(k)] {
			out = append(out, string(k))
		}
	}
	return strings.Join(out, "+")
}
