package handoff

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lifeloop/lifeloop/adapters"
)

// randomItems returns n items of every kind with texts of random sizes
// (multi-byte runes, newlines, backticks included), from seed.
func randomItems(seed uint64, n int) []adapters.HandoffItem {
	rng := rand.New(rand.NewPCG(seed, 1))
	text := func() string {
		words := []string{"alpha", "é", "日本語", "`tick`", "\n", "> quote", "# head", "x"}
		var b strings.Builder
		for range rng.IntN(800) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		return b.String()
	}
	items := make([]adapters.HandoffItem, n)
	for i := range items {
		switch rng.IntN(4) {
		case 0:
			items[i] = adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: text()}
		case 1:
			items[i] = adapters.HandoffItem{Kind: adapters.HandoffReply, Text: text()}
		case 2:
			items[i] = adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: fmt.Sprintf("tool%d", rng.IntN(70)),
				Reads: []string{fmt.Sprintf("/src/r%d.go", rng.IntN(200))}, Edits: []string{fmt.Sprintf("/src/e%d.go", rng.IntN(200))}, Command: text()}
		default:
			todos := make([]adapters.HandoffTodo, rng.IntN(80))
			for j := range todos {
				todos[j] = adapters.HandoffTodo{Text: text(), Status: []string{"pending", "completed", "in_progress"}[rng.IntN(3)]}
			}
			items[i] = adapters.HandoffItem{Kind: adapters.HandoffTodos, Todos: todos}
		}
	}
	return items
}

func render(items []adapters.HandoffItem, git Git, maxBytes int) string {
	c := &Collector{}
	for _, it := range items {
		c.Add(it)
	}
	return Render(Note{Facts: Facts{SessionID: "s1", Harness: "h", Cwd: "/w", SessionFile: "/w/f.jsonl"}, Items: c, Git: git}, maxBytes)
}

// TestRenderBounded: for random sessions and bounds, the note is valid
// UTF-8, within its bound, has every section heading in the fixed order,
// and is the same when rendered again.
func TestRenderBounded(t *testing.T) {
	headings := []string{"# Handoff note", "## Task (first prompts)", "## Latest prompts", "## Last assistant message",
		"## Open todo and plan items", "## Files edited", "## Files read", "## Commands run", "## Tool calls", "## Git"}
	changed := make([]string, 120)
	for i := range changed {
		changed[i] = fmt.Sprintf(" M file%d.go", i)
	}
	for seed := range uint64(40) {
		items := randomItems(seed, int(seed)*7)
		for _, bound := range []int{0, MinMaxBytes, 1500, 3000, 8000, 100000} {
			got := render(items, Git{Branch: "main", Changed: changed}, bound)
			limit := bound
			if limit == 0 {
				limit = DefaultMaxBytes
			}
			if len(got) > limit {
				t.Errorf("seed %d bound %d: note of %d bytes", seed, bound, len(got))
			}
			if !utf8.ValidString(got) {
				t.Errorf("seed %d bound %d: note is not valid UTF-8", seed, bound)
			}
			at := 0
			for _, h := range headings {
				i := strings.Index(got[at:], h)
				if i < 0 {
					t.Errorf("seed %d bound %d: heading %q missing or out of order:\n%s", seed, bound, h, got)
					break
				}
				at += i + len(h)
			}
			if again := render(items, Git{Branch: "main", Changed: changed}, bound); again != got {
				t.Errorf("seed %d bound %d: two renderings differ", seed, bound)
			}
		}
	}
}

// TestRenderSmallSessionWhole: a note that fits is not cut, and an empty
// session says so in each section.
func TestRenderSmallSessionWhole(t *testing.T) {
	got := render(nil, Git{Unavailable: "not a git repository"}, 0)
	for _, want := range []string{"No prompt recorded.", "None after the first ones.", "The session recorded no todo list or plan.", "No git state: not a git repository."} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "left out") {
		t.Errorf("a small note was cut:\n%s", got)
	}
}

// TestCollectorKeepsFirstAndLatest: of 10 prompts the first 3 and last 3
// are kept, and the 4 in between are counted.
func TestCollectorKeepsFirstAndLatest(t *testing.T) {
	c := &Collector{}
	for i := range 10 {
		c.Add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: fmt.Sprintf("p%d", i)})
	}
	got := Render(Note{Items: c}, 0)
	for _, want := range []string{"> p0\n\n> p1\n\n> p2\n", "(4 prompts between the first and these left out)\n\n> p7\n\n> p8\n\n> p9\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
}

// TestRecentFiles: a file used again moves to the end; beyond MaxFiles
// the least recent are counted, not listed; memory stays bounded.
func TestRecentFiles(t *testing.T) {
	var r recent
	for i := range 1000 {
		r.add(fmt.Sprintf("f%d", i))
	}
	r.add("f0")
	names, more := r.listed()
	if len(names) != MaxFiles || names[len(names)-1] != "f0" || more != 1000-MaxFiles+1 {
		t.Errorf("listed %d names ending %q, %d more; want %d ending f0, %d more", len(names), names[len(names)-1], more, MaxFiles, 1000-MaxFiles+1)
	}
	if len(r.last) > 4*MaxFiles {
		t.Errorf("%d names kept, over %d", len(r.last), 4*MaxFiles)
	}
}

// TestTruncate: cut on a rune boundary, within the bound, with a marker.
func TestTruncate(t *testing.T) {
	s := strings.Repeat("日本語", 100)
	for _, max := range []int{30, 31, 32, 33, 100} {
		got := Truncate(s, max)
		if len(got) > max || !utf8.ValidString(got) || !strings.HasSuffix(got, "bytes cut]") {
			t.Errorf("Truncate(…, %d) = %q (%d bytes)", max, got, len(got))
		}
	}
	if Truncate("short", 10) != "short" {
		t.Error("a short string was cut")
	}
}

// TestCode: inline code survives backticks in its text.
func TestCode(t *testing.T) {
	for in, want := range map[string]string{"ls": "`ls`", "echo `date`": "`` echo `date` ``", "a``b": "```a``b```", "x\ny": "`x y`"} {
		if got := code(in); got != want {
			t.Errorf("code(%q) = %q, want %q", in, got, want)
		}
	}
}
