package usage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// fakeRow is a row of fakeStore's database: a call of session "db".
type fakeRow struct {
	key string
	in  int64
}

// fakeStore is a harness with one database per path, each a list of
// rows (mark: the number of rows read); the file on disk changes with
// them, so a run sees the change.
type fakeStore struct {
	rows   map[string][]fakeRow
	stream bool
	// fail fails each reading whose number (from 1) it holds.
	fail  map[int]bool
	reads int
}

func (s *fakeStore) set(t *testing.T, path string, rows ...fakeRow) {
	t.Helper()
	s.rows[path] = rows
	if err := os.WriteFile(path, []byte(strings.Repeat("r", len(rows)+1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

func (s *fakeStore) UsageDatabases(func(string) string) ([]string, error) {
	var ps []string
	for p := range s.rows {
		ps = append(ps, p)
	}
	return ps, nil
}

func (s *fakeStore) UsageSince(_ context.Context, path string, mark int64, dst []adapters.UsageEntry) ([]adapters.UsageEntry, int64, error) {
	_, err := s.EachUsageSince(context.Background(), path, mark, func(e *adapters.UsageEntry) { dst = append(dst, *e) })
	return dst, int64(len(s.rows[path])), err
}

func (s *fakeStore) EachUsageSince(_ context.Context, path string, mark int64, each func(*adapters.UsageEntry)) (int64, error) {
	if s.reads++; s.fail[s.reads] {
		return mark, errors.New("the database is gone")
	}
	rows := s.rows[path]
	if mark > int64(len(rows)) {
		mark = 0 // made anew: read from its start
	}
	for _, r := range rows[mark:] {
		each(&adapters.UsageEntry{At: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC), SessionID: "db" + filepath.Base(path), Model: "m", Key: r.key,
			Tokens: adapters.UsageTokens{Input: r.in}})
	}
	return int64(len(rows)), nil
}

// streamless hides fakeStore's EachUsageSince.
type streamless struct{ *fakeStore }

func (s streamless) EachUsageSince() {}

// A database's calls that a transcript earlier in path order counted
// first are not counted, nor those the index holds for another file, and
// a database made anew drops its identities: read through
// EachUsageSince and through UsageSince alone.
func TestDatabaseCallsCountedOnce(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			h := t.TempDir()
			dir := filepath.Join(h, ".claude/projects/-home-dev-p")
			os.MkdirAll(dir, 0o700)
			var b strings.Builder
			for i, c := range []struct {
				key string
				in  int64
			}{{"k1", 10}, {"k2", 20}, {"k3", 30}} {
				m, r, _ := strings.Cut(c.key+":r", ":")
				fmt.Fprintf(&b, `{"requestId":"%s","message":{"id":"%s","type":"message","role":"assistant","model":"claude-opus-4-8","usage":{"input_tokens":%d,"output_tokens":1}},"type":"assistant","timestamp":"2026-11-21T22:12:1%d.150Z","cwd":"/p","sessionId":"a"}`+"\n", r, m, c.in, i)
			}
			os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(b.String()), 0o600)
			fs := &fakeStore{rows: map[string][]fakeRow{}, stream: stream}
			var store adapters.UsageStore = fs
			if !stream {
				store = streamless{fs}
			}
			later, earlier := filepath.Join(h, "zz.db"), filepath.Join(h, ".aaa.db")
			// Transcripts' identities are message id and request id.
			fs.set(t, later, fakeRow{"k2:r", 200}, fakeRow{"k4:r", 400}, fakeRow{"", 500}, fakeRow{"k1:r", 100})
			src := []Source{sources[0], {Harness: "fake", Store: store}}
			check := func(run string, want map[string][2]int64) {
				t.Helper()
				sc, err := scanner(t, h, nil, nil, src...).Run()
				if err != nil {
					t.Fatal(err)
				}
				got := map[string][2]int64{}
				for _, r := range sc.Group([]string{"session"}, Filter{}).Rows {
					got[r.Keys["session"]] = [2]int64{r.Calls, r.Tokens.Input}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s: counted %v, want %v", run, got, want)
				}
			}
			check("first", map[string][2]int64{"a": {3, 60}, "dbzz.db": {2, 900}})
			fs.set(t, later, append(fs.rows[later], fakeRow{"k5:r", 1000}, fakeRow{"k3:r", 300})...)
			check("rows added", map[string][2]int64{"a": {3, 60}, "dbzz.db": {3, 1900}})
			// Made anew with fewer rows: its mark is past them.
			fs.set(t, later, fakeRow{"k3:r", 3}, fakeRow{"k6:r", 6}, fakeRow{"k4:r", 4})
			check("made anew", map[string][2]int64{"a": {3, 60}, "dbzz.db": {2, 10}})
			// Earlier in path order, but the index holds k1 for a.jsonl.
			fs.set(t, earlier, fakeRow{"k1:r", 7}, fakeRow{"k7:r", 70})
			check("earlier database", map[string][2]int64{"a": {3, 60}, "dbzz.db": {2, 10}, "db.aaa.db": {1, 70}})
		})
	}
}

// A database that cannot be read again (its calls another file counted
// first) has the run made again: read whole then, or, when it cannot
// be read then either, not counted, and the calls it held count where
// else they are.
func TestDatabaseThatCannotBeReadAgain(t *testing.T) {
	h := t.TempDir()
	dir := filepath.Join(h, ".claude/projects/-home-dev-p")
	os.MkdirAll(dir, 0o700)
	line := `{"requestId":"r","message":{"id":"k1","type":"message","role":"assistant","model":"claude-opus-4-8","usage":{"input_tokens":10,"output_tokens":1}},"type":"assistant","timestamp":"2026-11-21T22:12:10.150Z","cwd":"/p","sessionId":"a"}` + "\n"
	os.WriteFile(filepath.Join(dir, "z.jsonl"), []byte(line), 0o600)
	fs := &fakeStore{rows: map[string][]fakeRow{}, stream: true}
	db := filepath.Join(h, "a.db")
	fs.set(t, db, fakeRow{"k1:r", 100}, fakeRow{"k1:r", 100}, fakeRow{"k2:r", 200})
	src := []Source{sources[0], {Harness: "fake", Store: fs}}
	count := func() string {
		t.Helper()
		var warn bytes.Buffer
		sc, err := scanner(t, h, nil, &warn, src...).Run()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]int64{}
		for _, r := range sc.Group([]string{"session"}, Filter{}).Rows {
			got[r.Keys["session"]] = [2]int64{r.Calls, r.Tokens.Input}
		}
		return fmt.Sprint(got) + " " + warn.String()
	}
	// z.jsonl (under .claude, first in path order) counts k1; the
	// database's k1 lost. Readings: 1 the first, 2 again (fails), 3 the
	// run made again, 4 again.
	fs.fail = map[int]bool{2: true}
	if got, want := count(), "map[a:[1 10] dba.db:[1 200]] "; got != want {
		t.Fatalf("counted %q, want %q", got, want)
	}
	// A new database whose k2 the index holds for a.db: it cannot be
	// read again in the run made again either, so it counts nothing
	// this run, and everything the next.
	fs.reads = 0
	fs.set(t, filepath.Join(h, "b.db"), fakeRow{"k2:r", 7}, fakeRow{"k3:r", 30})
	fs.fail = map[int]bool{2: true, 4: true}
	if got := count(); !strings.HasPrefix(got, "map[a:[1 10] dba.db:[1 200]] ") || !strings.Contains(got, "b.db: the database is gone (read again from its start next run)") {
		t.Fatalf("counted %q", got)
	}
	fs.reads, fs.fail = 0, nil
	if got, want := count(), "map[a:[1 10] dba.db:[1 200] dbb.db:[1 30]] "; got != want {
		t.Fatalf("counted %q, want %q", got, want)
	}
}
