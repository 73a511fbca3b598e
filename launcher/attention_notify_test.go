package launcher

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/notify"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// noticeFixture is a supervisor with a tracker, a terminal whose last
// key the test sets and a clock it moves, outside any loop: the
// announcement's rules alone.
type noticeFixture struct {
	s   *supervisor
	ft  *fakeTerminal
	now time.Time
}

func newNoticeFixture() *noticeFixture {
	n := &noticeFixture{ft: &fakeTerminal{}, now: time.Unix(1_800_000_000, 0)}
	n.s = &supervisor{cfg: Config{Now: func() time.Time { return n.now }}, term: n.ft}
	n.s.att.tracker = attention.NewTracker(n.now)
	return n
}

// key is a key typed at the terminal ago before now.
func (n *noticeFixture) key(ago time.Duration) {
	n.ft.mu.Lock()
	n.ft.lastKey = n.now.Add(-ago)
	n.ft.mu.Unlock()
}

// fact folds f in at now as the supervisor does, less the tick (no
// harness runs here).
func (n *noticeFixture) fact(kind attention.FactKind, state attention.State) {
	before := n.s.att.tracker.Current()
	if n.s.att.tracker.Observe(attention.Fact{At: n.now, Kind: kind, State: state, Source: attention.SourceHook, Evidence: "test"}) {
		n.s.noticeChange(before, closedBy(n.s.att.tracker, before))
	}
}

// TestAnnouncementWaitsForTyping: an episode that opens while no key was
// typed for 2 s is announced at once; one that opens within 2 s of a key
// waits until 2 s pass without one (the activity check asks), and is
// dropped if it closes meanwhile.
func TestAnnouncementWaitsForTyping(t *testing.T) {
	n := newNoticeFixture()
	n.key(5 * time.Second)
	n.fact(attention.TurnStarted, "")
	n.fact(attention.TurnEnded, "") // waiting_for_input, episode 1
	if a := n.s.att.notice; a.announced != 1 || a.pending != 0 {
		t.Fatalf("quiet terminal: %+v, want episode 1 announced at once", a)
	}

	n.now = n.now.Add(time.Minute)
	n.key(500 * time.Millisecond) // typing the next prompt
	n.fact(attention.TurnStarted, "")
	n.fact(attention.Claim, attention.NeedsAnswer) // episode 2, 0.5 s after a key
	if a := n.s.att.notice; a.announced != 1 || a.pending != 2 {
		t.Fatalf("typing: %+v, want episode 2 held", a)
	}
	n.now = n.now.Add(time.Second)
	n.s.noticePending()
	if a := n.s.att.notice; a.announced != 1 || a.pending != 2 {
		t.Fatalf("1.5 s after the key: %+v, want episode 2 still held", a)
	}
	n.now = n.now.Add(600 * time.Millisecond)
	n.s.noticePending()
	if a := n.s.att.notice; a.announced != 2 || a.pending != 0 {
		t.Fatalf("2.1 s after the key: %+v, want episode 2 announced", a)
	}

	n.now = n.now.Add(time.Minute)
	n.fact(attention.TurnEnded, "")
	n.fact(attention.TurnStarted, "")
	n.key(100 * time.Millisecond)
	n.fact(attention.Claim, attention.NeedsPermission) // episode 4, held
	n.now = n.now.Add(time.Second)
	n.fact(attention.KeyTyped, "") // answered before the typing stopped
	n.now = n.now.Add(5 * time.Second)
	n.s.noticePending()
	if a := n.s.att.notice; a.pending != 0 || a.announced == 4 {
		t.Fatalf("an episode closed while held: %+v, want it dropped, never announced", a)
	}
	if eps := n.s.att.tracker.Episodes(); len(eps) != 4 || eps[3].Kind != attention.NeedsPermission || eps[3].Open() {
		t.Fatalf("episodes %+v, want the 4th a closed needs_permission", eps)
	}
}

// TestEpisodeNoticeMatchesBlock: what the notifiers are told of a closed
// episode is what the stream's block says of it.
func TestEpisodeNoticeMatchesBlock(t *testing.T) {
	n := newNoticeFixture()
	n.s.rec.ID, n.s.rec.AdapterID, n.s.rec.Cwd = "ses_x", "claude", "/w"
	n.fact(attention.TurnStarted, "")
	n.fact(attention.Claim, attention.NeedsPermission)
	n.now = n.now.Add(1234 * time.Millisecond)
	before := n.s.att.tracker.Current()
	n.s.att.tracker.Observe(attention.Fact{At: n.now, Kind: attention.KeyTyped, Source: attention.SourceFrame})
	closed := closedBy(n.s.att.tracker, before)
	b := attention.BlockOf(n.s.att.tracker, n.now, closed)
	e := n.s.episodeNotice(*closed, "test")
	if e.Session != "ses_x" || e.Harness != "claude" || e.Cwd != "/w" || e.ID != b.Closed.ID || e.Kind != string(b.Closed.Kind) ||
		e.Source != string(b.Closed.Source) || e.Turn != b.Closed.Turn || e.Since.UnixMilli() != b.Closed.Start ||
		e.End.UnixMilli() != b.Closed.End || e.Duration.Milliseconds() != b.Closed.DurationMs || e.Duration != 1234*time.Millisecond {
		t.Errorf("notice %+v, block's closed episode %+v: want the same values", e, *b.Closed)
	}
}

// TestNotifierRunsOncePerEpisode: with run's --notify command, a
// permission dialog opened while no key was typed runs the command once,
// with the episode's facts (the same as the stream's block); the
// dialog's later notification runs nothing more; a dialog that opens
// right after a key and is answered at once is never announced; the
// turn's end, right after that key, is announced once 2 s pass with no
// key; the session's notify.log holds what the command printed. With
// ticks off (--tick 0) the activity checks still run for it.
func TestNotifierRunsOncePerEpisode(t *testing.T) {
	t.Parallel()
	for _, tick := range []time.Duration{50 * time.Millisecond, 0} {
		t.Run(fmt.Sprint(tick), func(t *testing.T) { notifierOncePerEpisode(t, tick) })
	}
}

func notifierOncePerEpisode(t *testing.T, tick time.Duration) {
	f, ft := renewFixture(t)
	f.cfg.Tick = tick
	f.cfg.Grace = 50 * time.Millisecond
	f.cfg.ControlSocket = control.SocketIn(statedir.SessionDir(f.root, f.cfg.Record.ID)) // long test names
	f.cfg.Record.Cwd = t.TempDir()
	out := filepath.Join(t.TempDir(), "announced")
	f.cfg.Notify = notify.Config{Command: `printf '%s %s %s %s %s %s\n' "$LIFELOOP_SESSION_ID" "$LIFELOOP_HARNESS" "$LIFELOOP_ATTENTION" "$LIFELOOP_ATTENTION_EPISODE" "$LIFELOOP_ATTENTION_DETAIL" "$LIFELOOP_ATTENTION_SINCE" >> ` + out + `; echo ran`}
	done := make(chan Result, 1)
	go func() { done <- f.run(t) }()
	testutil.WaitFor(t, func() bool { return ft.count() == 1 })
	lines := func() []string {
		b, _ := os.ReadFile(out)
		return strings.Fields(strings.ReplaceAll(string(b), "\n", " | "))
	}

	frame(t, f, contract.EventFrameOpening, "p1")
	claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","prompt_id":"p1","tool_name":"Bash"}`)
	claudeHook(t, f, "Notification", `{"hook_event_name":"Notification","session_id":"s1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`)
	asked := waitAttentionTick(t, f, 2)
	testutil.WaitFor(t, func() bool { return len(lines()) > 0 })
	since := time.UnixMilli(asked.Since).UTC().Format("2006-01-02T15:04:05.000Z07:00")
	want := []string{f.cfg.Record.ID, "claude", "needs_permission", "1", "Bash", since, "|"}

	// The key answers the first dialog; the next one, opened right after
	// it (episode 2) and answered at once, is never announced.
	ft.typeKey()
	claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","prompt_id":"p1","tool_name":"Write"}`)
	time.Sleep(5 * time.Millisecond)
	ft.typeKey()
	testutil.WaitFor(t, func() bool {
		b := attentionTicks(t, f)
		return b[len(b)-1].Closed != nil && b[len(b)-1].Closed.Detail == "Write"
	})
	// The turn's end, with no key for 2 s: announced once the typing is
	// over (the waiting_for_input episode, 3).
	frame(t, f, contract.EventFrameEnded, "p1")
	testutil.WaitFor(t, func() bool { return len(lines()) > len(want) })
	endSession(ft, done)

	got := lines()
	want = append(want, f.cfg.Record.ID, "claude", "waiting_for_input", "3")
	if len(got) < len(want) || !slices.Equal(got[:7], want[:7]) || !slices.Equal(got[7:11], want[7:]) || len(got) != 13 {
		t.Errorf("the command announced %q, want the permission episode 1 and waiting_for_input 3 only, each once:\n%q", got, want)
	}
	log, err := os.ReadFile(filepath.Join(statedir.SessionDir(f.root, f.cfg.Record.ID), notify.LogName))
	if err != nil || strings.Count(string(log), "ran") != 2 {
		t.Errorf("notify.log: %q (%v), want the command's output twice", log, err)
	}
}
