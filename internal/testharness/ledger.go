package testharness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The readiness helpers of each harness (claude.go, codex.go, gemini.go,
// opencode.go, pi.go) wait on lifecycle evidence first: a receipt in the
// ledger that `lifeloop run --state-dir DIR` keeps (session.started when
// the harness named its session, frame.ended at the end of a turn), or a
// line in the harness's own transcript. The screen is their last resort,
// and the screen text a harness draws is named only inside its helper,
// so a harness release that redraws its TUI changes one function.

// Ledgers reads every session ledger under stateDir (the receipts.jsonl
// files `lifeloop run --state-dir stateDir` writes), keyed by lifeloop
// session id. A line still being written is skipped.
func Ledgers(stateDir string) map[string][]map[string]any {
	paths, _ := filepath.Glob(filepath.Join(stateDir, "sessions", "*", "receipts.jsonl"))
	out := map[string][]map[string]any{}
	for _, p := range paths {
		out[filepath.Base(filepath.Dir(p))] = readJSONLines(p)
	}
	return out
}

// readJSONLines parses the complete JSON lines of path; it skips what does
// not parse (a line being appended).
func readJSONLines(path string) []map[string]any {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// CountReceipts counts the receipts of event in every ledger under
// stateDir.
func CountReceipts(stateDir, event string) int {
	n := 0
	for _, rs := range Ledgers(stateDir) {
		for _, r := range rs {
			if r["event"] == event {
				n++
			}
		}
	}
	return n
}

// WaitReceipts waits until the ledgers under stateDir hold at least n
// receipts of event. It fails the test, with the events seen and the
// screen, when the program on term exits first or after timeout (a safety
// net against a hung harness, not a timing assertion).
func WaitReceipts(t testing.TB, term *Terminal, stateDir, event string, n int, timeout time.Duration) {
	t.Helper()
	waitEvidence(t, term, timeout, fmt.Sprintf("%d× %s in the ledger", n, event), func() bool {
		return CountReceipts(stateDir, event) >= n
	}, func() string { return fmt.Sprint(ledgerEvents(stateDir)) })
}

func ledgerEvents(stateDir string) []string {
	var evs []string
	for _, rs := range Ledgers(stateDir) {
		for _, r := range rs {
			evs = append(evs, fmt.Sprint(r["event"]))
		}
	}
	return evs
}

// waitEvidence polls ok until it holds; it fails the test when term's
// program exits first (when term is not nil) or after timeout.
func waitEvidence(t testing.TB, term *Terminal, timeout time.Duration, what string, ok func() bool, seen func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		exited := term != nil && term.Exited()
		if exited && ok() {
			return
		}
		if exited || time.Now().After(deadline) {
			var screen string
			if term != nil {
				screen = tail(term.Output(), 2000)
			}
			cause := fmt.Sprintf("within %v", timeout)
			if exited {
				cause = "before the program exited"
			}
			t.Fatalf("no %s %s; seen: %s\nscreen:\n%s", what, cause, seen(), screen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitForAfter is WaitFor on the output past byte n (of Output): a
// harness started again on the same terminal is told apart from the
// screen the one before it left.
func (term *Terminal) WaitForAfter(n int, s string, timeout time.Duration) error {
	squeezed := squeeze(s)
	deadline := time.Now().Add(timeout)
	for {
		out := term.Output()
		if len(out) > n {
			rest := out[n:]
			if strings.Contains(rest, s) || strings.Contains(squeeze(rest), squeezed) {
				return nil
			}
		}
		if term.Exited() || time.Now().After(deadline) {
			return fmt.Errorf("no %q in the output past byte %d within %v; last output:\n%s", s, n, timeout, tail(out, 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitAfter is WaitForAfter failing the test.
func waitAfter(t testing.TB, term *Terminal, n int, s string, timeout time.Duration) {
	t.Helper()
	if err := term.WaitForAfter(n, s, timeout); err != nil {
		t.Fatal(err)
	}
}

// waitBannerThen waits until the output past byte n shows banner and,
// after it, ready: a harness started again on the terminal draws its
// banner first, and the one before it may have left ready on the screen.
func waitBannerThen(t testing.TB, term *Terminal, n int, banner, ready string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if out := term.Output(); len(out) > n {
			if i := strings.Index(out[n:], banner); i >= 0 {
				waitAfter(t, term, n+i+len(banner), ready, time.Until(deadline))
				return
			}
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("the relaunched harness never showed %q; terminal:\n%s", banner, tail(term.Output(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func join(ss []string) string { return strings.Join(ss, ", ") }
