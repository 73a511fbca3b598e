package usage

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestEachCallCountedOnceAsAModelCounts: over runs that add files,
// append to them, write them anew shorter and remove them, with calls
// repeated within a file (the lines of one message, and far apart),
// across files and across runs, every run's report has, per session
// file, the calls and tokens a plain model counts: the identities of
// files gone or written anew are dropped, then a call whose identity the
// index or an earlier place (path order, then line order) holds is not
// counted. With pairs spilled every few (more runs than a merge can
// hold in one buffer) and without.
func TestEachCallCountedOnceAsAModelCounts(t *testing.T) {
	for _, limit := range []int{3, 1 << 20} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			defer func(l int) { spillLimit = l }(spillLimit)
			spillLimit = limit
			for seed := range uint64(6) {
				countedOnceAsAModel(t, seed)
			}
		})
	}
}

type modelCall struct {
	key        string // "" for a call without identity
	in, out    int64
	ownSession string
}

func countedOnceAsAModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 54))
	h := t.TempDir()
	dir := filepath.Join(h, ".claude/projects/-home-dev-p")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	content := map[string][]modelCall{} // by file name
	// The model: which file's reading counted an identity, how many
	// calls of each file were read, and what each file counted.
	owner := map[string]string{}
	read := map[string]int{}
	type sums struct{ calls, in, out int64 }
	counted := map[string]*sums{}
	newCalls := func(n int) []modelCall {
		var cs []modelCall
		for len(cs) < n {
			c := modelCall{in: rng.Int64N(1000) + 1, out: rng.Int64N(100) + 1}
			if rng.IntN(8) > 0 {
				c.key = fmt.Sprintf("msg_%d:req_%d", rng.IntN(40), rng.IntN(3))
			}
			cs = append(cs, c)
			if c.key != "" && rng.IntN(3) == 0 {
				// the next line of the same message
				cs = append(cs, modelCall{key: c.key, in: c.in, out: c.out})
			}
		}
		return cs
	}
	write := func(name string) {
		var b strings.Builder
		for i, c := range content[name] {
			req := ""
			id := fmt.Sprintf("msg_x%d_%d", len(name), i)
			if c.key != "" {
				m, r, _ := strings.Cut(c.key, ":")
				id, req = m, `"requestId":"`+r+`",`
			}
			fmt.Fprintf(&b, `{%s"message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-4-8","usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d}},"type":"assistant","timestamp":"2026-11-21T22:12:17.150Z","cwd":"/home/dev/p","sessionId":"%s"}`+"\n",
				req, id, c.in, c.out, strings.TrimSuffix(name, ".jsonl"))
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	drop := func(name string) {
		for k, o := range owner {
			if o == name {
				delete(owner, k)
			}
		}
		delete(counted, name)
		delete(read, name)
	}
	for run := range 10 {
		changed := map[string]bool{}
		names := func() []string {
			var ns []string
			for n := range content {
				ns = append(ns, n)
			}
			sort.Strings(ns)
			return ns
		}
		for _, n := range names() {
			switch rng.IntN(6) {
			case 0: // appended to
				content[n] = append(content[n], newCalls(1+rng.IntN(6))...)
				changed[n] = true
			case 1: // written anew, shorter
				if len(content[n]) > 3 {
					content[n] = newCalls(1)[:1]
					changed[n] = true
					drop(n)
				}
			case 2: // removed
				if run > 2 {
					delete(content, n)
					os.Remove(filepath.Join(dir, n))
					drop(n)
				}
			}
		}
		for range 1 + rng.IntN(3) {
			n := fmt.Sprintf("f%03d.jsonl", rng.IntN(1000))
			if _, ok := content[n]; !ok {
				content[n] = newCalls(2 + rng.IntN(12))
				changed[n] = true
			}
		}
		for n := range changed {
			write(n)
		}
		// The model's reading, in path order.
		for _, n := range names() {
			if !changed[n] {
				continue
			}
			s := counted[n]
			if s == nil {
				s = &sums{}
				counted[n] = s
			}
			for _, c := range content[n][read[n]:] {
				if c.key != "" {
					if _, ok := owner[c.key]; ok {
						continue
					}
					owner[c.key] = n
				}
				s.calls++
				s.in += c.in
				s.out += c.out
			}
			read[n] = len(content[n])
		}
		sc, err := scanner(t, h, nil, nil, sources[0]).Run()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]sums{}
		for _, r := range sc.Group([]string{"session"}, Filter{}).Rows {
			got[r.Keys["session"]+".jsonl"] = sums{r.Calls, r.Tokens.Input, r.Tokens.Output}
		}
		for n, want := range counted {
			if want.calls == 0 {
				continue
			}
			if got[n] != *want {
				t.Fatalf("seed %d, run %d: %s counted %+v, the model %+v", seed, run, n, got[n], *want)
			}
			delete(got, n)
		}
		for n, g := range got {
			t.Fatalf("seed %d, run %d: %s counted %+v, the model nothing", seed, run, n, g)
		}
	}
}

// A run whose identities must go to disk and cannot fails with what to
// do, and gives no report (one would count repeated calls).
func TestIdentitiesThatCannotGoToDiskFailTheRun(t *testing.T) {
	defer func(l int) { spillLimit = l }(spillLimit)
	spillLimit = 2
	h := home(t)
	t.Setenv("TMPDIR", filepath.Join(h, "missing"))
	sc, err := scanner(t, h, nil, nil).Run()
	if sc != nil || err == nil || !strings.Contains(err.Error(), "set TMPDIR to a writable folder") {
		t.Fatalf("scan %v, error %v", sc != nil, err)
	}
}
