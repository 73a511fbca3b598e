package usage

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/lifeloop/lifeloop/internal/pricing"
)

// Dimensions are what a report groups by, in the order of its columns.
var Dimensions = []string{"day", "harness", "project", "session", "model"}

// Filter keeps the calls of days Since to Until (YYYY-MM-DD, inclusive;
// "" for no bound).
type Filter struct {
	Since, Until string
}

// Row is one group of a report.
type Row struct {
	// Keys are the group's values, by dimension.
	Keys map[string]string
	Sums
}

// Report is a scan's calls grouped by By.
type Report struct {
	By    []string
	Rows  []Row
	Total Row
}

// Group groups the scan's calls by the dimensions by (checked by the
// caller against Dimensions).
func (sc *Scan) Group(by []string, f Filter) *Report {
	groups := map[string]*Row{}
	rep := &Report{By: by, Total: Row{Keys: map[string]string{}}}
	// Files and buckets in a fixed order, so the costs' sums are the same
	// from run to run to the last bit.
	recs := sc.idx.ordered
	if sc.idx.files != nil {
		recs = make([]*fileRecord, 0, len(sc.idx.files))
		for _, rec := range sc.idx.files {
			recs = append(recs, rec)
		}
		sort.Slice(recs, func(i, j int) bool { return recs[i].Path < recs[j].Path })
	}
	var id []byte
	vals := make([]string, len(by))
	for _, rec := range recs {
		for i := range rec.Buckets {
			k, s := &rec.Buckets[i].Key, &rec.Buckets[i].Sums
			if (f.Since != "" && k.Day < f.Since) || (f.Until != "" && k.Day > f.Until) {
				continue
			}
			id = id[:0]
			for j, d := range by {
				vals[j] = dimension(d, rec.Harness, k)
				id = append(append(id, vals[j]...), 0)
			}
			g := groups[string(id)] // no allocation for the lookup
			if g == nil {
				g = &Row{Keys: make(map[string]string, len(by))}
				for j, d := range by {
					g.Keys[d] = vals[j]
				}
				groups[string(id)] = g
			}
			g.add(s)
			rep.Total.add(s)
		}
	}
	for _, g := range groups {
		rep.Rows = append(rep.Rows, *g)
	}
	sort.Slice(rep.Rows, func(i, j int) bool {
		for _, d := range by {
			if a, b := rep.Rows[i].Keys[d], rep.Rows[j].Keys[d]; a != b {
				return a < b
			}
		}
		return false
	})
	return rep
}

// dimension is a bucket's value of the dimension d.
func dimension(d, harness string, k *bucketKey) string {
	switch d {
	case "day":
		return k.Day
	case "harness":
		return harness
	case "project":
		return k.Project
	case "session":
		return k.Session
	case "model":
		return k.Model
	}
	return ""
}

// Provenance says where a group's cost comes from: native, estimated or
// unknown, joined with "+" when its calls differ.
func (s *Sums) Provenance() string {
	var p []string
	if s.NativeCalls > 0 {
		p = append(p, string(pricing.Native))
	}
	if s.EstimatedCalls > 0 {
		p = append(p, string(pricing.Estimated))
	}
	if s.UnknownCalls > 0 {
		p = append(p, string(pricing.Unknown))
	}
	return strings.Join(p, "+")
}

// CostText is the cost as a person reads it: "?" when no call is priced,
// "$1.23+?" when some are not, never 0 for an unknown cost.
func (s *Sums) CostText() string {
	known := s.NativeCalls + s.EstimatedCalls
	switch {
	case s.Calls == 0:
		return "-"
	case known == 0:
		return "?"
	case s.UnknownCalls > 0:
		return fmt.Sprintf("$%.2f+?", s.Native+s.Estimated)
	}
	return fmt.Sprintf("$%.2f", s.Native+s.Estimated)
}

// WriteTable writes the report as a table with a totals row: the
// groups' columns aligned left, the figures right.
func (r *Report) WriteTable(w io.Writer) error {
	var head []string
	for _, d := range r.By {
		head = append(head, strings.ToUpper(d[:1])+d[1:])
	}
	head = append(head, "Input", "Cache read", "Cache write", "Output", "Reasoning", "Total", "Cost", "Provenance")
	rows := [][]string{head}
	line := func(keys []string, s *Sums) {
		rows = append(rows, append(keys,
			num(s.Tokens.Input), num(s.Tokens.CacheRead), num(s.Tokens.CacheWrite), num(s.Tokens.Output), num(s.Tokens.Reasoning),
			num(s.Tokens.Total()), s.CostText(), s.Provenance()))
	}
	for i := range r.Rows {
		var keys []string
		for _, d := range r.By {
			keys = append(keys, r.Rows[i].Keys[d])
		}
		line(keys, &r.Rows[i].Sums)
	}
	keys := make([]string, len(r.By))
	if len(keys) > 0 {
		keys[0] = "Total"
	}
	line(keys, &r.Total.Sums)
	width := make([]int, len(head))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		b.Reset()
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			switch {
			case i == len(row)-1:
				b.WriteString(c) // the last column: no trailing blanks
			case i < len(r.By):
				b.WriteString(c + pad)
			default:
				b.WriteString(pad + c)
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// num writes n with thousands separators.
func num(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// jsonRow is a row of the JSON report.
type jsonRow struct {
	Keys        map[string]string `json:"keys,omitempty"`
	Calls       int64             `json:"calls"`
	Input       int64             `json:"input_tokens"`
	CacheRead   int64             `json:"cache_read_tokens"`
	CacheWrite  int64             `json:"cache_write_tokens"`
	Output      int64             `json:"output_tokens"`
	Reasoning   int64             `json:"reasoning_tokens"`
	Total       int64             `json:"total_tokens"`
	CostUSD     *float64          `json:"cost_usd"`
	Provenance  string            `json:"cost_provenance"`
	Unpriced    int64             `json:"unpriced_calls"`
	NativeUSD   float64           `json:"native_cost_usd"`
	EstimateUSD float64           `json:"estimated_cost_usd"`
}

func toJSON(r *Row) jsonRow {
	j := jsonRow{
		Keys: r.Keys, Calls: r.Calls,
		Input: r.Tokens.Input, CacheRead: r.Tokens.CacheRead, CacheWrite: r.Tokens.CacheWrite,
		Output: r.Tokens.Output, Reasoning: r.Tokens.Reasoning, Total: r.Tokens.Total(),
		Provenance: r.Provenance(), Unpriced: r.UnknownCalls,
		NativeUSD: r.Native, EstimateUSD: r.Estimated,
	}
	if r.NativeCalls+r.EstimatedCalls > 0 {
		c := r.Native + r.Estimated
		j.CostUSD = &c // null when nothing is priced: never 0
	}
	return j
}

// PriceInfo names the price table a report used.
type PriceInfo struct {
	Source   string `json:"source"`
	Version  string `json:"version"`
	Date     string `json:"date"`
	UserFile string `json:"user_file,omitempty"`
}

// WriteJSON writes the report as one JSON object.
func (r *Report) WriteJSON(w io.Writer, prices PriceInfo) error {
	out := struct {
		Prices PriceInfo `json:"prices"`
		By     []string  `json:"by"`
		Rows   []jsonRow `json:"rows"`
		Total  jsonRow   `json:"total"`
	}{Prices: prices, By: r.By, Rows: []jsonRow{}}
	for i := range r.Rows {
		out.Rows = append(out.Rows, toJSON(&r.Rows[i]))
	}
	out.Total = toJSON(&r.Total)
	out.Total.Keys = nil
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
