package top

import (
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

func waiting(state attention.State, d time.Duration, detail string, waitedMs int64) *topview.Attention {
	return &topview.Attention{Block: attention.Block{State: state, Since: fixedNow.Add(-d).UnixMilli(), Source: attention.SourceHook,
		Detail: detail, Turn: 2, Episode: 3, WaitedMs: map[attention.State]int64{state: waitedMs}}}
}

// attentionRows are the fixture's sessions with what they wait for: a
// permission dialog in a tmux pane, a finished turn in a screen session,
// an error on a plain terminal, one working and one that ran without a
// terminal.
func attentionRows() []Row {
	rows := fixtureRows()
	for i := range rows {
		r := &rows[i]
		switch r.Harness {
		case "claude":
			r.Attention = waiting(attention.NeedsPermission, 4*time.Minute+12*time.Second, "Bash", 250_000)
			r.Terminal = &statedir.Terminal{TTY: "/dev/pts/4", TmuxPane: "%7", TmuxSocket: "/tmp/tmux-1000/default"}
		case "codex":
			r.Attention = waiting(attention.WaitingForInput, 30*time.Second, "", 30_000)
			r.Terminal = &statedir.Terminal{TTY: "/dev/pts/5", Screen: "2211.pts-5.dev"}
		case "gemini":
			r.Attention = waiting(attention.StoppedOnError, 2*time.Minute, "rate_limit", 120_000)
			r.Terminal = &statedir.Terminal{TTY: "/dev/pts/6"}
		case "generic":
			r.Attention = &topview.Attention{Block: attention.Block{State: attention.Working, Since: fixedNow.Add(-time.Minute).UnixMilli()}}
		}
	}
	topview.SortRows(rows)
	return rows
}

func attentionModel(w, h int, env map[string]string) *Model {
	m := NewModel(Config{Root: "/home/dev/.local/state/lifeloop", Home: "/home/dev", Now: func() time.Time { return fixedNow },
		Getenv: func(k string) string { return env[k] }}, attentionRows())
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

func TestGoldenAttentionScreens(t *testing.T) {
	for _, size := range []struct{ w, h int }{{80, 24}, {160, 30}, {180, 30}} {
		m := attentionModel(size.w, size.h, nil)
		screen := m.Render()
		checkScreen(t, screen, size.w, size.h)
		name := "attention-" + strconv.Itoa(size.w) + "x" + strconv.Itoa(size.h)
		golden(t, name+".txt", ansi.Strip(screen)+"\n")
	}
}

// TestSessionsThatNeedAPersonComeFirst: the permission dialog, then the
// error, then the finished turn; the message line names what the
// selected one waits for.
func TestSessionsThatNeedAPersonComeFirst(t *testing.T) {
	m := attentionModel(80, 24, nil)
	var got []string
	for _, r := range m.Rows()[:4] {
		got = append(got, r.Harness)
	}
	if strings.Join(got, " ") != "claude gemini codex generic" {
		t.Fatalf("order %v, want claude gemini codex generic", got)
	}
	if want := "ses_9TAQGFKK: needs permission (Bash) for 4m12s, from hook; waited 4m10s in all"; m.prompt() != want {
		t.Errorf("message line %q, want %q", m.prompt(), want)
	}
}

// TestNextKeyJumpsToTheNextSessionWaiting: n goes to the next session
// that needs a person, wrapping round past those that do not.
func TestNextKeyJumpsToTheNextSessionWaiting(t *testing.T) {
	m := attentionModel(80, 24, nil)
	var seen []string
	for range 4 {
		press(m, "n")
		r, _ := m.current()
		seen = append(seen, r.Harness)
	}
	if strings.Join(seen, " ") != "gemini codex claude gemini" {
		t.Fatalf("n visited %v", seen)
	}
	// No session waiting: n says so and stays.
	m = fixtureModel(80, 24)
	press(m, "j")
	before := m.selected
	press(m, "n")
	if m.selected != before || m.message != "no session waits for a person" {
		t.Errorf("n without waiting sessions: selected %s (was %s), message %q", m.selected, before, m.message)
	}
}

// TestOpenKeyPrintsTheCommandThatReachesTheTerminal: o prints in the
// message line how to get to the selected session's terminal.
func TestOpenKeyPrintsTheCommandThatReachesTheTerminal(t *testing.T) {
	for _, c := range []struct {
		harness string
		env     map[string]string
		want    string
	}{
		{"claude", map[string]string{"TMUX": "/tmp/tmux-1000/default,4242,0"}, "tmux switch-client -t %7"},
		{"claude", nil, "tmux -S /tmp/tmux-1000/default attach -t %7"},
		{"claude", map[string]string{"TMUX": "/tmp/tmux-1000/other,1,0"}, "tmux -S /tmp/tmux-1000/default attach -t %7"},
		{"codex", nil, "screen -x 2211.pts-5.dev"},
		{"gemini", nil, "ses_00GEMIN1 runs on /dev/pts/6 (pid 4230)"},
		{"generic", nil, "ses_00PAUSE1: its terminal is not known (started without one, or by an older lifeloop)"},
	} {
		m := attentionModel(80, 24, c.env)
		for i, r := range m.Rows() {
			if r.Harness == c.harness {
				m.cursor, m.selected = i, r.ID
			}
		}
		press(m, "o")
		if m.message != c.want {
			t.Errorf("%s with %v: o says %q, want %q", c.harness, c.env, m.message, c.want)
		}
		lines := strings.Split(ansi.Strip(m.Render()), "\n")
		if !strings.HasPrefix(lines[22], topview.Fit(c.want, 80)[:20]) {
			t.Errorf("the message line shows %q", lines[22])
		}
	}
}

// TestFilterByAttention: the filter finds sessions by what they wait for.
func TestFilterByAttention(t *testing.T) {
	m := attentionModel(80, 24, nil)
	press(m, "/")
	typeText(m, "permission")
	press(m, "enter")
	if len(m.rows) != 1 || m.rows[0].Harness != "claude" {
		t.Fatalf("filter permission: %d rows", len(m.rows))
	}
}
