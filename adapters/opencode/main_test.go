package opencode

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if fixtureDir != "" {
		_ = os.RemoveAll(fixtureDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// The fixture: a database the real OpenCode wrote, offline against the
// mock model, in a folder of its own (copied out of the harness's
// environment after it exited), shared by the tests of this package.
//
// Two `opencode run` sessions in one project with model limits
// 10000/1000: the first reports input 100, cache write 2000, cache read
// 3000, output 7 (5107 in context); the second 9000 + 50 = 9050, at or
// above 10000-1000, so OpenCode compacts automatically, then runs its
// continue turn (usage 12 + 5).
var (
	fixtureOnce sync.Once
	fixtureDir  string
	fixture     realDB
)

type realDB struct {
	// DB is the copied database; Cwd the project folder the sessions ran
	// in; Launch a time before both sessions.
	DB, Cwd string
	Launch  time.Time
	// Turn and Compact are the two sessions' ids.
	Turn, Compact string
	err           string
}

// realDatabase returns the fixture, making it on first use; it skips the
// test when OpenCode is not installed.
func realDatabase(t testing.TB) realDB {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the real OpenCode binary")
	}
	bin := testharness.OpenCodeBin(t)
	fixtureOnce.Do(func() { fixture = makeFixture(t, bin) })
	if fixture.err != "" {
		t.Fatal(fixture.err)
	}
	return fixture
}

func makeFixture(t testing.TB, bin string) (r realDB) {
	mock, err := mockmodel.Start(mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 100, CacheCreationInputTokens: 2000, CacheReadInputTokens: 3000, OutputTokens: 7},
		{InputTokens: 9000, OutputTokens: 50},
	}})
	if err != nil {
		return realDB{err: err.Error()}
	}
	defer mock.Close()
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
	r.Cwd, r.Launch = env.Dir, time.Now()
	for _, args := range [][]string{{"run", "say", "hi"}, {"run", "fill", "the", "context"}} {
		if res := env.Run(0, bin, args...); res.ExitCode != 0 {
			return realDB{err: "opencode " + args[1] + " exited " + res.Stderr}
		}
	}
	fixtureDir, err = os.MkdirTemp("", "lifeloop-opencode-")
	if err != nil {
		return realDB{err: err.Error()}
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := copyFile(env.OpenCodeDB()+suffix, filepath.Join(fixtureDir, "opencode.db"+suffix)); err != nil && suffix == "" {
			return realDB{err: err.Error()}
		}
	}
	r.DB = filepath.Join(fixtureDir, "opencode.db")
	d := &Discoverer{Database: r.DB, Cwd: r.Cwd, Launch: r.Launch}
	cs, err := d.Candidates()
	if err != nil || len(cs) != 2 {
		return realDB{err: "fixture sessions: " + toString(cs, err)}
	}
	r.Turn, r.Compact = cs[0].SessionID, cs[1].SessionID
	return r
}

func toString(cs any, err error) string {
	if err != nil {
		return err.Error()
	}
	return fmt.Sprint(cs)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyDB copies the fixture database into a folder of the test's own.
func copyDB(t *testing.T, r realDB) string {
	t.Helper()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := copyFile(r.DB+suffix, filepath.Join(dir, "opencode.db"+suffix)); err != nil && suffix == "" {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "opencode.db")
}

// pageSize is how many events records reads at a time.
const pageSize = 256

// records reads every event of session id as the records Follow delivers.
func records(t *testing.T, db, id string) []string {
	t.Helper()
	h, err := kit.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	var out []string
	last := int64(-1)
	for {
		page, err := readEvents(context.Background(), h, id, last, pageSize, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range page {
			out = append(out, string(record(r)))
			last = r.Seq
		}
		if len(page) < pageSize {
			return out
		}
	}
}

// digest hashes the database files that exist.
func digest(t *testing.T, db string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(db + suffix)
		if err != nil {
			continue
		}
		out[suffix] = sha256.Sum256(b)
	}
	return out
}
