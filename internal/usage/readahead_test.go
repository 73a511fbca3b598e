package usage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

// Reading a file ahead (readahead.go) counts what reading it line by
// line counts: the same buckets, identities, offset, resume state,
// unreadable lines and unfinished last line, over real Claude Code and
// Codex files repeated past several blocks, with lines that cross the
// blocks' ends, one longer than two blocks, empty and broken lines, and
// a last line that is not finished.
func TestReadAheadCountsWhatLineByLineCounts(t *testing.T) {
	pr, err := pricing.New("")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, sample string
		ur           adapters.UsageReader
	}{
		{"claude", "testdata/home/.claude/projects/-home-dev-project/tool-turn.jsonl", claude.Harness{}},
		{"codex", "testdata/home/.codex/sessions/2026/11/21/rollout-2026-11-21T22-12-19-tool-turn.jsonl", codex.Harness{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sample, err := os.ReadFile(c.sample)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(strings.TrimRight(string(sample), "\n"), "\n")
			var b strings.Builder
			b.WriteString(lines[0])
			for i := 0; b.Len() < 3*aheadBlock*aheadBlocks; i++ {
				for _, l := range lines[1:] {
					// each copy of a call is a call of its own; Claude
					// Code's have an identity (the samples' mock sent no
					// request id)
					l = strings.ReplaceAll(l, `"id":"`, fmt.Sprintf(`"id":"c%d-`, i))
					if c.name == "claude" && strings.Contains(l, `"type":"assistant"`) {
						l = `{"requestId":"req_1",` + l[1:]
					}
					b.WriteString(l)
				}
				switch i {
				case 3:
					b.WriteString("\n\nnot a line of JSON\n")
				case 5:
					b.WriteString(`{"type":"assistant","text":"` + strings.Repeat("x", 2*aheadBlock+17) + `"}` + "\n")
				case 7:
					b.WriteString(`{"type":"assistant","message":{"usage":{"input_tokens":` + "\n")
				}
			}
			b.WriteString(`{"unfinished":`)
			path := filepath.Join(t.TempDir(), "session.jsonl")
			if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}

			type result struct {
				rec           fileRecord
				read, bad, at int64
				warnings      string
				pairs         []pair
				err           error
			}
			read := func(ahead bool) result {
				s := &Scanner{Pricer: pr}
				ids := newIdentities(1)
				defer ids.close()
				r := s.newReader(time.UTC, ids, false)
				r.begin(0, 0)
				f, err := openAt(path, 0, int64(b.Len()))
				if err != nil {
					t.Fatal(err)
				}
				defer f.close()
				rec := &fileRecord{Path: path}
				p := c.ur.NewUsageParser(path, nil)
				var res result
				if ahead {
					res.read, res.bad, res.at, res.err = r.fileAhead(rec, path, f, p.(adapters.UsageLineFilter))
				} else {
					res.read, res.bad, res.at, res.err = r.fileLines(rec, path, f, p)
				}
				rec.State = p.State()
				r.handOver()
				res.rec, res.warnings, res.pairs = *rec, r.warnings.String(), ids.pairs.buf
				return res
			}
			lineByLine, ahead := read(false), read(true)
			if !reflect.DeepEqual(ahead, lineByLine) {
				t.Fatalf("read ahead:\n%+v\nline by line:\n%+v", ahead, lineByLine)
			}
			calls := 0
			for _, bk := range lineByLine.rec.Buckets {
				calls += int(bk.Sums.Calls)
			}
			if calls < 20 || (c.name == "claude" && len(lineByLine.pairs) < 20) || lineByLine.bad < 2 || lineByLine.warnings == "" || lineByLine.rec.Offset >= int64(b.Len()) {
				t.Fatalf("%d calls, %d bad lines, warnings %q, offset %d of %d: the test reads too little",
					calls, lineByLine.bad, lineByLine.warnings, lineByLine.rec.Offset, b.Len())
			}
		})
	}
}

// The lines kept ahead are what the filter keeps.
func TestReadAheadKeepsWhatTheFilterKeeps(t *testing.T) {
	data := []byte("{\"a\":1}\n{\"input_tokens\":2}\n\nbroken\n{\"b\":3}\n")
	p := claude.Harness{}.NewUsageParser("/h/.claude/projects/p/s.jsonl", nil).(adapters.UsageLineFilter)
	out := make(chan *aheadBatch, 4)
	go readAhead(bytes.NewReader(data), 100, p, out, nil)
	var kept []string
	var bad, first int64
	for b := range out {
		for _, k := range b.kept {
			kept = append(kept, fmt.Sprintf("%d %s", k.off, k.line))
		}
		if b.bad > 0 {
			bad, first = bad+b.bad, b.firstBad
		}
	}
	if want := []string{`108 {"input_tokens":2}`}; !reflect.DeepEqual(kept, want) || bad != 1 || first != 128 {
		t.Fatalf("kept %q, %d bad (first at %d); want %q, 1 bad at 128", kept, bad, first, want)
	}
}
