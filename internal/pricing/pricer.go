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
	// Info names the table; the table itself is decoded when a call is
	// first priced (a run with nothing new prices nothing).
	Info  Info
	table *Table
	// User are the user file's prices by model id or id prefix (lower
	// case); UserPath is the file ("" when none was read).
	User     map[string]Price
	UserPath string

	// found caches find's answers by provider and model id (a session
	// names few models, a machine's sessions a few dozen).
	mu    sync.Mutex // guards table and found
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
	p := &Pricer{}
	info, err := embeddedInfo()
	if err != nil {
		return nil, fmt.Errorf("pricing: the embedded table is damaged: %w", err)
	}
	p.Info = info
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

// embeddedInfo decodes the embedded table's top-level fields but
// "providers", which are skipped by their brackets: every run names the
// table, and its 240 KB are read only when a call is priced.
func embeddedInfo() (Info, error) { return infoOf(embedded) }

// infoOf is embeddedInfo of the table b.
func infoOf(b []byte) (Info, error) {
	var head []byte
	rest, ok := skipSpace(b, 0), true
	if rest >= len(b) || b[rest] != '{' {
		return Info{}, errors.New("not a JSON object")
	}
	head = append(head, '{')
	for i := rest + 1; ok; {
		i = skipSpace(b, i)
		if i < len(b) && b[i] == '}' {
			break
		}
		keyEnd, kok := skipValue(b, i)
		colon := skipSpace(b, keyEnd)
		if !kok || i >= len(b) || b[i] != '"' || colon >= len(b) || b[colon] != ':' {
			return Info{}, errors.New("not a JSON object")
		}
		valStart := skipSpace(b, colon+1)
		valEnd, vok := skipValue(b, valStart)
		if !vok {
			return Info{}, errors.New("a value is unfinished")
		}
		if string(b[i:keyEnd]) != `"providers"` {
			if len(head) > 1 {
				head = append(head, ',')
			}
			head = append(head, b[i:valEnd]...)
		}
		i = skipSpace(b, valEnd)
		switch {
		case i < len(b) && b[i] == ',':
			i++
		case i < len(b) && b[i] == '}':
			ok = false
		default:
			return Info{}, errors.New("not a JSON object")
		}
	}
	head = append(head, '}')
	var info Info
	err := json.Unmarshal(head, &info)
	return info, err
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue is the end of the JSON value at b[i:] (its brackets counted,
// its strings' escapes followed; the rest not checked) and whether it
// ends.
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return i, false
			}
		case '{', '[':
			depth++
			continue
		case '}', ']':
			if depth == 0 {
				return i, true // the end of a number or literal
			}
			depth--
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i, true
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return i + 1, true
		}
		if depth < 0 {
			return i, false
		}
	}
	return i, depth == 0
}

// Table is the embedded table, decoded on first use; nil when it is
// damaged (a build that TestEmbeddedTableNamesItsSource fails).
func (p *Pricer) Table() *Table {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tableLocked()
}

func (p *Pricer) tableLocked() *Table {
	if p.table == nil {
		p.table, _ = Embedded()
	}
	return p.table
}

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
	id := strings.ToLower(strings.TrimSpace(model))
	if id == "" {
		return Price{}, false
	}
	if pr, ok := p.User[id]; ok {
		return pr, true
	}
	best := ""
	for k := range p.User {
		if strings.HasPrefix(id, k) && len(k) > len(best) {
			best = k
		}
	}
	if best != "" {
		return p.User[best], true
	}
	key := [2]string{provider, id}
	p.mu.Lock()
	m, ok := p.found[key]
	if !ok {
		if t := p.tableLocked(); t != nil {
			m = t.find(strings.ToLower(provider), id)
		}
		if p.found == nil {
			p.found = map[[2]string]*Model{}
		}
		p.found[key] = m
	}
	p.mu.Unlock()
	if m == nil {
		return Price{}, false
	}
	return m.at(at), true
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
