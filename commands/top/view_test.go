package top

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lifeloop/lifeloop/autorenew"
	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/renewal"
)

var update = flag.Bool("update", false, "rewrite golden files")

// fixedNow is the clock of every golden screen.
var fixedNow = time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)

func ago(d time.Duration) *time.Time {
	t := fixedNow.Add(-d)
	return &t
}

// fixtureRows are six sessions covering every column: pressure at each
// level, a pending renewal, a renewal in progress, a paused session and
// two ended ones; a renewal policy's renewal, its attached client and
// its report.
func fixtureRows() []Row {
	rows := []Row{
		{ID: "ses_01M84QETC9FPT750TC9TAQGFKK", Harness: "claude", State: "running", Cwd: "/home/dev/src/payments-service",
			Pid: 4101, StartedAt: ago(72 * time.Minute), Frames: 41, Activity: "active", OutputAt: ago(2 * time.Second),
			Pressure:  &Pressure{Level: "high", Tokens: 161_000, Window: 200_000, Percent: 80.5},
			LastEvent: "frame.ended", LastEventAt: ago(3 * time.Second), Sequence: 380,
			Renewal: "delivered", Policy: &sessionview.Policy{RenewalAttempt: 2, Renewal: &renewal.Policy{
				Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, TriggerTokens: 142_600, Window: 200_000,
				NoteDigest: "sha256:ab12", NoteBytes: 1234, NoteSource: "builtin", ThisHour: 2, PerHour: 3}}},
		{ID: "ses_01M84QF0000000000000CODEX1", Harness: "codex", State: "running", Cwd: "/home/dev/src/api",
			Pid: 4188, StartedAt: ago(25 * time.Minute), Frames: 12, Activity: "idle", OutputAt: ago(4 * time.Minute),
			Pressure:  &Pressure{Level: "critical", Tokens: 245_000, Window: 258_400, Percent: 94.8},
			LastEvent: "context.pressure_observed", LastEventAt: ago(4 * time.Minute), Sequence: 120,
			Renewal: "delivered", RenewalPending: true},
		{ID: "ses_01M84QF1000000000000GEMIN1", Harness: "gemini", State: "running", Cwd: "/home/dev/src/web",
			Pid: 4230, StartedAt: ago(9 * time.Minute), Frames: 3, Activity: "active", OutputAt: ago(0),
			Pressure:  &Pressure{Level: "moderate", Tokens: 560_000, Window: 1_048_576, Percent: 53.4},
			LastEvent: "session.ending", LastEventAt: ago(1 * time.Second), Sequence: 48,
			Renewal: "stopping", RenewalPending: true},
		{ID: "ses_01M84QF2000000000000PAUSE1", Harness: "generic", State: "paused", Cwd: "/tmp/scratch",
			Pid: 4300, StartedAt: ago(3*time.Hour + 7*time.Minute), Activity: "idle", OutputAt: ago(50 * time.Minute),
			LastEvent: "supervisor.tick", LastEventAt: ago(50 * time.Minute), Sequence: 9,
			Policy: &sessionview.Policy{Client: &autorenew.State{Client: renewal.PolicyClientID, Threshold: "70%", PerHour: 3}}},
		{ID: "ses_01M84QE0000000000000ENDED1", Harness: "pi", State: "completed", Cwd: "/home/dev/src/docs",
			StartedAt: ago(40 * time.Minute), EndedAt: ago(10 * time.Minute), Frames: 7,
			Pressure:  &Pressure{Level: "low", Tokens: 12_400, Window: 128_000, Percent: 9.7},
			LastEvent: "session.ended", LastEventAt: ago(10 * time.Minute), Sequence: 77,
			Policy: &sessionview.Policy{Report: &sessionview.PolicyReport{Decision: "gave_up", Reason: "futile", Detail: "the new conversation started at 66 %"}}},
		{ID: "ses_01M84QD0000000000000ABORT1", Harness: "opencode", State: "aborted", Cwd: "/home/dev/src/infra",
			StartedAt: ago(55 * time.Minute), EndedAt: ago(20 * time.Minute), Frames: 2,
			LastEvent: "session.ended", LastEventAt: ago(20 * time.Minute), Sequence: 30},
	}
	topview.SortRows(rows)
	return rows
}

func fixtureModel(w, h int) *Model {
	m := NewModel(Config{Root: "/home/dev/.local/state/lifeloop", Home: "/home/dev", Now: func() time.Time { return fixedNow }}, fixtureRows())
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// checkScreen asserts a rendered screen is exactly w×h cells.
func checkScreen(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Fatalf("screen has %d lines, want %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n != w {
			t.Errorf("line %d is %d cells wide, want %d: %q", i, n, w, ansi.Strip(l))
		}
	}
}

func TestGoldenScreens(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 48}, {180, 48}} {
		m := fixtureModel(size.w, size.h)
		m.move(1) // the second row selected
		screen := m.Render()
		checkScreen(t, screen, size.w, size.h)
		name := "screen-" + strconv.Itoa(size.w) + "x" + strconv.Itoa(size.h)
		golden(t, name+".txt", ansi.Strip(screen)+"\n")
		golden(t, name+".ansi", screen+"\n")
	}
}

func TestGoldenOnce(t *testing.T) {
	rows := fixtureModel(80, 24).Rows()
	golden(t, "once-120.txt", ansi.Strip(topview.Once(rows, fixedNow, 120, "/home/dev/.local/state/lifeloop", "/home/dev", topview.Colours256)))
}

func TestGaugeLevels(t *testing.T) {
	for _, c := range []struct {
		pct  float64
		want string
	}{{0, "░░░░░░░░░░"}, {4, "░░░░░░░░░░"}, {5, "█░░░░░░░░░"}, {80.5, "████████░░"}, {100, "██████████"}, {130, "██████████"}} {
		if got := topview.Gauge(c.pct, 10); got != c.want {
			t.Errorf("Gauge(%v) = %q, want %q", c.pct, got, c.want)
		}
	}
	// The gauge takes its level's colour; an ended row is dimmed instead.
	m := fixtureModel(80, 24)
	m.move(5) // select the last (ended) row, away from the colored ones
	screen := m.Render()
	for _, l := range strings.Split(screen, "\n") {
		plain := ansi.Strip(l)
		switch {
		case strings.HasPrefix(plain, "TAQGFKK") || strings.Contains(plain, "9TAQGFKK"):
			if !strings.Contains(l, "38;5;208") {
				t.Errorf("the high-pressure gauge is not orange: %q", l)
			}
		case strings.Contains(plain, "00CODEX1"):
			if !strings.Contains(l, "31") {
				t.Errorf("the critical gauge is not red: %q", l)
			}
		}
	}
}

func TestResizeKeepsScreenSize(t *testing.T) {
	m := fixtureModel(80, 24)
	for _, s := range []struct{ w, h int }{{100, 30}, {40, 10}, {200, 60}, {80, 24}} {
		m.Update(tea.WindowSizeMsg{Width: s.w, Height: s.h})
		checkScreen(t, m.Render(), s.w, s.h)
	}
}

func TestScrollKeepsSelectionVisible(t *testing.T) {
	var rows []Row
	for i := range 40 {
		rows = append(rows, Row{ID: "ses_" + strconv.Itoa(1000+i), Harness: "generic", State: "running", StartedAt: ago(time.Duration(i) * time.Minute)})
	}
	m := NewModel(Config{Now: func() time.Time { return fixedNow }}, rows)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 12})
	for range 30 {
		m.Update(key("j"))
	}
	if !strings.Contains(ansi.Strip(m.Render()), topview.ShortID(m.rows[30].ID)) {
		t.Fatalf("the selected row 30 is not on screen:\n%s", ansi.Strip(m.Render()))
	}
}

func key(s string) tea.KeyPressMsg {
	switch s {
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	}
	r := []rune(s)[0]
	return tea.KeyPressMsg{Code: r, Text: s}
}

func typeText(m *Model, s string) {
	for _, r := range s {
		m.Update(key(string(r)))
	}
}

// fakeActions records the actions top asks for.
type fakeActions struct {
	mu    sync.Mutex
	calls []string
	err   error
}

func (f *fakeActions) Control(_ context.Context, id, op string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, op+" "+id)
	return id + ": " + op + " done", f.err
}

func (f *fakeActions) Renew(_ context.Context, id string, files []string, resume bool) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	how := "fresh"
	if resume {
		how = "resume"
	}
	f.calls = append(f.calls, "renew "+id+" "+how+" "+strings.Join(files, ","))
	return id + ": renewal delivered", f.err
}

// run executes a command's message(s) into the model, as the program would.
func run(m *Model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	if msg := cmd(); msg != nil {
		m.Update(msg)
	}
}

func press(m *Model, s string) {
	_, cmd := m.Update(key(s))
	run(m, cmd)
}

func TestKeys(t *testing.T) {
	acts := &fakeActions{}
	m := fixtureModel(80, 24)
	m.cfg.Actions = acts
	claude := m.rows[0].ID

	// renew with a payload file, resumed
	press(m, "r")
	typeText(m, "/tmp/p.json")
	press(m, "enter")
	if !strings.Contains(m.prompt(), "[f]resh or [r]esumed") {
		t.Fatalf("prompt after the payload file: %q", m.prompt())
	}
	press(m, "r")
	// abort asks first: n cancels, y aborts
	press(m, "j")
	press(m, "a")
	press(m, "n")
	press(m, "a")
	press(m, "y")
	// pause a running session, resume a paused one
	press(m, "k")
	press(m, "p")
	for i, r := range m.rows {
		if r.State == "paused" {
			m.cursor, m.selected = i, r.ID
		}
	}
	paused := m.selected
	press(m, "p")
	// renew with no payload, fresh
	press(m, "g")
	press(m, "r")
	press(m, "enter")
	press(m, "f")
	// esc cancels a renewal
	press(m, "r")
	press(m, "esc")

	want := []string{
		"renew " + claude + " resume /tmp/p.json",
		"abort " + m.rows[1].ID,
		"pause " + claude,
		"resume " + paused,
		"renew " + claude + " fresh ",
	}
	if strings.Join(acts.calls, "\n") != strings.Join(want, "\n") {
		t.Fatalf("actions:\n%s\nwant:\n%s", strings.Join(acts.calls, "\n"), strings.Join(want, "\n"))
	}
	if m.message != "renewal cancelled" {
		t.Errorf("message = %q", m.message)
	}
	// an action's error shows in the message line
	acts.err = errors.New("session has no live wrapper")
	press(m, "p")
	if !strings.Contains(m.message, "no live wrapper") {
		t.Errorf("message = %q", m.message)
	}
	// ended sessions refuse actions without asking anyone
	n := len(acts.calls)
	press(m, "G")
	press(m, "a")
	press(m, "r")
	if len(acts.calls) != n || m.mode != modeTable {
		t.Errorf("an ended session was acted on: %v (mode %d)", acts.calls[n:], m.mode)
	}
	// q quits
	_, cmd := m.Update(key("q"))
	if cmd == nil {
		t.Fatal("q returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("q does not quit")
	}
}

func TestFilter(t *testing.T) {
	m := fixtureModel(80, 24)
	press(m, "/")
	typeText(m, "codx")
	press(m, "backspace")
	typeText(m, "ex")
	press(m, "enter")
	if len(m.rows) != 1 || m.rows[0].Harness != "codex" {
		t.Fatalf("filter codex: %d rows", len(m.rows))
	}
	for _, c := range []struct {
		f    string
		want int
	}{{"paused", 1}, {"src/", 5}, {"renewing", 1}, {"nothing-matches", 0}} {
		press(m, "esc")
		press(m, "/")
		typeText(m, c.f)
		press(m, "enter")
		if len(m.rows) != c.want {
			t.Errorf("filter %q: %d rows, want %d", c.f, len(m.rows), c.want)
		}
	}
	press(m, "esc")
	if len(m.rows) != 6 {
		t.Errorf("esc did not clear the filter: %d rows", len(m.rows))
	}
}

func TestEndedSessionsAgeOut(t *testing.T) {
	now := fixedNow
	m := NewModel(Config{Now: func() time.Time { return now }, Recent: 15 * time.Minute}, fixtureRows())
	if len(m.rows) != 5 { // the session ended 20 minutes ago is gone
		t.Fatalf("%d rows, want 5", len(m.rows))
	}
	now = now.Add(10 * time.Minute)
	m.Update(clockMsg(now))
	if len(m.rows) != 4 {
		t.Fatalf("%d rows after 10 minutes, want 4", len(m.rows))
	}
	m.cfg.All = true
	m.applyFilter()
	if len(m.rows) != 6 {
		t.Fatalf("--all: %d rows, want 6", len(m.rows))
	}
}

// TestPolicyLineOfTheSelectedSession: with nothing else to say, the
// message line tells what the renewal policy did for the selected
// session — at 80 columns too, whose table has no renewal column.
func TestPolicyLineOfTheSelectedSession(t *testing.T) {
	m := fixtureModel(80, 24)
	for i, r := range m.Rows() {
		if r.Harness == "claude" {
			m.move(i)
		}
	}
	screen := m.Render()
	checkScreen(t, screen, 80, 24)
	lines := strings.Split(ansi.Strip(screen), "\n")
	if got, want := strings.TrimRight(lines[22], " "), "ses_9TAQGFKK: renewed by policy at 71 % (threshold 70 %), 2 of 3 this hour"; got != want {
		t.Errorf("message line %q, want %q", got, want)
	}
	m.move(-len(m.Rows())) // the first row: no policy, no line
	if got := strings.TrimSpace(ansi.Strip(strings.Split(m.Render(), "\n")[22])); got != "" {
		t.Errorf("message line of a session without policy: %q", got)
	}
}
