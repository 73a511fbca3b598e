package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// BenchmarkAutorenew prints the renewal policy's rows of the summary
// alone (LIFELOOP_BENCH_HARNESSES picks the harnesses of the first row,
// LIFELOOP_BENCH_AUTORENEW_TURNS the turns of the scripted session,
// default 30, LIFELOOP_BENCH_AUTORENEW_REPLY the bytes of each answer,
// default 4000).
func BenchmarkAutorenew(b *testing.B) {
	for b.Loop() {
		t := &summary{b: b, runs: 1}
		t.autorenewals()
		t.print(os.Stdout)
	}
}

// autorenewals adds the renewal policy's rows: per harness, a person's
// cost of a policy renewal (from the crossing turn's frame.ended to the
// new harness taking keys) beside the harness's own start; and, for
// Claude Code, the context saved: the request bytes of a scripted TUI
// session with the policy at 60 % against the same script without it.
func (t *summary) autorenewals() {
	pick := os.Getenv("LIFELOOP_BENCH_HARNESSES")
	for _, name := range []string{"claude", "codex", "gemini", "opencode", "pi", "openclaw"} {
		if pick != "" && !slices.Contains(strings.Split(pick, ","), name) {
			continue
		}
		cost, own := t.policyRenewalCost(autoTUIs[name])
		t.row(name+" policy renewal: frame.ended → harness takes keys", ms(cost), "its launch → ready "+ms(own),
			fmt.Sprintf("%.2f×", cost.Seconds()/own.Seconds()), "settle (2 s) + the harness's own start")
	}
	turns := 30
	if v, err := strconv.Atoi(os.Getenv("LIFELOOP_BENCH_AUTORENEW_TURNS")); err == nil && v > 0 {
		turns = v
	}
	reply := 4000
	if v, err := strconv.Atoi(os.Getenv("LIFELOOP_BENCH_AUTORENEW_REPLY")); err == nil && v > 0 {
		reply = v
	}
	with, renewals := t.scriptedSession(autoTUIs["claude"], turns, reply, true)
	without, _ := t.scriptedSession(autoTUIs["claude"], turns, reply, false)
	t.row(fmt.Sprintf("claude context saved: request bytes of %d turns of %d-byte answers, policy at 60 %% (%d renewals)", turns, reply, renewals),
		kib(with), "without it "+kib(without), fmt.Sprintf("%.2f×", float64(with)/float64(without)), "≤ 0.5×")
}

func kib(n int) string { return fmt.Sprintf("%.0f KiB", float64(n)/1024) }

// policyRenewalCost runs h's TUI under `lifeloop run --renew-at 70%`, has
// one turn fill 80 % of the window and measures from that turn's
// frame.ended showing in the ledger to keys typed once the renewal began
// (its session.ending) showing in the new harness; it returns that and
// the TUI's own launch → ready.
func (t *summary) policyRenewalCost(h autoTUI) (cost, own time.Duration) {
	b := t.b
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "Answered.", UsageSequence: []mockmodel.Usage{h.usage(80)}, Usage: h.usage(15)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = mock.Close() }()
	env := h.env(b, mock)
	state := filepath.Join(b.TempDir(), "state")
	launched := time.Now()
	term := startAutoTUI(b, h, env, state, "--renew-at", autorenewAt)
	own = time.Since(launched)
	defer endSafeTUI(b, env, term)
	ended := watchLedger(state, `"event":"frame.ended"`)
	ending := watchLedger(state, `"renewal_step":"ending"`)
	h.prompt(b, term, "first prompt")
	endedAt := <-ended
	if (<-ending).IsZero() || endedAt.IsZero() {
		b.Fatalf("%s: no policy renewal within a minute of the turn:\n%s", h.name, tailText(testharness.StripANSI(term.Output()), 2000))
	}
	before := len(term.Output())
	const typed = "typed after the renewal"
	term.Type(typed)
	if !outputAfter(term, before, typed, screenTimeout) {
		b.Fatalf("%s: keys typed during the policy renewal never showed:\n%s", h.name, tailText(testharness.StripANSI(term.Output()), 2000))
	}
	return time.Since(endedAt), own
}

// scriptedSession drives h's TUI through turns prompts, each answered
// with the same reply of replyBytes by a mock that reports each request's
// own size as its input (4 bytes a token) against a window that turn 30
// would fill to about 90 %; with policy, under `lifeloop run --renew-at
// 60%`. It returns the bytes of all model requests the harness sent and
// the renewals.
func (t *summary) scriptedSession(h autoTUI, turns, replyBytes int, policy bool) (bytes, renewals int) {
	b := t.b
	const bytesPerToken = 4
	line := "The mock model adds this line to the conversation. "
	reply := strings.Repeat(line, replyBytes/len(line)+1)[:replyBytes]
	// The window from the size of the harness's first request: Claude
	// Code's system prompt and tools weigh more than 30 answers.
	probe := t.firstRequestBytes(h)
	window := (probe + turns*(len(reply)+200)) / bytesPerToken * 10 / 9
	mock, err := mockmodel.Start(mockmodel.Config{Reply: reply, BytesPerToken: bytesPerToken})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = mock.Close() }()
	env := h.env(b, mock)
	env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", strconv.Itoa(window))
	state := filepath.Join(b.TempDir(), "state")
	var flags []string
	if policy {
		flags = []string{"--renew-at", "60%"}
	}
	term := startAutoTUI(b, h, env, state, flags...)
	defer endSafeTUI(b, env, term)
	for i := 1; i <= turns; i++ {
		before := len(term.Output())
		h.prompt(b, term, fmt.Sprintf("scripted prompt %d", i))
		waitReceipt(b, term, state, "frame.ended", i)
		// The same pause after every turn, with or without the policy:
		// its settle and a renewal's start.
		time.Sleep(autorenewSettle + time.Second)
		_, rs := onlySession(b, state)
		if n := len(receiptsFor(renewalReceipts(rs), "session.ending")); n > renewals {
			renewals = n
			for deadline := time.Now().Add(screenTimeout); renewalsStarted(rs) < n; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					b.Fatalf("the policy renewal after turn %d never started: %v", i, eventsOf(rs))
				}
				_, rs = onlySession(b, state)
			}
			h.relaunched(b, term, before)
		}
	}
	for _, r := range mock.Requests() {
		if r.Kind == h.kind || r.Kind == h.kind+"-side" {
			bytes += len(r.Body)
		}
	}
	return bytes, renewals
}

// firstRequestBytes is the size of the first conversation request of h's
// TUI (under `lifeloop run`, no policy).
func (t *summary) firstRequestBytes(h autoTUI) int {
	b := t.b
	mock, err := mockmodel.Start(mockmodel.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = mock.Close() }()
	env := h.env(b, mock)
	state := filepath.Join(b.TempDir(), "state")
	term := startAutoTUI(b, h, env, state)
	defer endSafeTUI(b, env, term)
	h.prompt(b, term, "probe prompt")
	waitReceipt(b, term, state, "frame.ended", 1)
	reqs := mock.RequestsOfKind(h.kind)
	if len(reqs) == 0 {
		b.Fatalf("%s: no model request", h.name)
	}
	return len(reqs[0].Body)
}
