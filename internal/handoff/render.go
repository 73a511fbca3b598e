package handoff

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultMaxBytes is the default bound of a note (16 KiB); MinMaxBytes
// the smallest bound a note can be given.
const (
	DefaultMaxBytes = 16 << 10
	MinMaxBytes     = 1024
)

// MaxChangedFiles is how many of `git status --porcelain`'s lines a note
// lists.
const MaxChangedFiles = 50

// Facts are what the ledger and session record say of the session.
type Facts struct {
	SessionID string
	Harness   string
	Cwd       string
	// Started is the session's start as written (RFC 3339), "" unknown.
	Started string
	// Renewals is how many renewals the ledger records as started.
	Renewals int
	// SessionFile is the harness's session file the items were read from.
	SessionFile string
	// Skipped is how many of its lines could not be read.
	Skipped int
}

// Git is the working folder's git state, gathered by the caller.
type Git struct {
	// Branch is the current branch ("HEAD" when detached).
	Branch string
	// Changed are the lines of `git status --porcelain`.
	Changed []string
	// Unavailable says why there is no git state ("not a git
	// repository", …); "" when Branch and Changed are set.
	Unavailable string
}

// Note is everything a note is made of.
type Note struct {
	Facts Facts
	Items *Collector
	Git   Git
}

// Render returns the note as markdown of at most maxBytes bytes
// (DefaultMaxBytes when 0, at least MinMaxBytes). Its sections come in a
// fixed order; when they do not all fit, each is cut at a line to a fair
// share of the bound (the smaller sections whole, the larger ones
// shortened equally), with a line saying what was left out.
func Render(n Note, maxBytes int) string {
	if maxBytes == 0 {
		maxBytes = DefaultMaxBytes
	}
	maxBytes = max(maxBytes, MinMaxBytes)
	c := n.Items
	if c == nil {
		c = &Collector{}
	}
	head := header(n.Facts)
	sections := []string{
		taskSection(c), latestSection(c), replySection(c), todoSection(c),
		fileSection("Files edited", &c.edits), fileSection("Files read", &c.reads),
		commandSection(c), toolSection(c), gitSection(n.Git),
	}
	if len(head) > maxBytes/4 {
		head = cutLines(head, maxBytes/4)
	}
	fit(sections, maxBytes-len(head))
	return head + strings.Join(sections, "")
}

// fit shortens sections in place so that together they take at most
// budget bytes: the smallest are kept whole while they fit in an equal
// share of what is left, the others cut to that share.
func fit(sections []string, budget int) {
	total := 0
	for _, s := range sections {
		total += len(s)
	}
	if total <= budget {
		return
	}
	order := make([]int, len(sections))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return len(sections[order[a]]) < len(sections[order[b]]) })
	left := budget
	for k, i := range order {
		share := left / (len(order) - k)
		if len(sections[i]) > share {
			sections[i] = cutLines(sections[i], share)
		}
		left -= len(sections[i])
	}
}

// cutLines cuts a section to at most n bytes, at a line boundary unless
// that would drop more than half of what fits, and ends
// it with a line saying how many bytes were left out (or, when even that
// does not fit, returns what fits of it).
func cutLines(s string, n int) string {
	if len(s) <= n {
		return s
	}
	note := func(cut int) string {
		return "\n… (" + strconv.Itoa(cut) + " bytes of this section left out: the note is bounded)\n\n"
	}
	keep := n - len(note(len(s)))
	if keep <= 0 {
		return prefix("…\n", n)
	}
	if i := strings.LastIndexByte(s[:keep], '\n'); i > keep/2 {
		keep = i
	} else { // a long line: cut inside it rather than drop it

		for keep > 0 && !utf8.RuneStart(s[keep]) {
			keep--
		}
	}
	return s[:keep] + note(len(s)-keep)
}

func prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

func header(f Facts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Handoff note: session %s\n\n", orUnknown(f.SessionID))
	fmt.Fprintf(&b, "- harness: %s\n", orUnknown(f.Harness))
	fmt.Fprintf(&b, "- working folder: %s\n", orUnknown(f.Cwd))
	fmt.Fprintf(&b, "- started: %s\n", orUnknown(f.Started))
	fmt.Fprintf(&b, "- renewals: %d\n", f.Renewals)
	fmt.Fprintf(&b, "- session file: %s\n", orUnknown(f.SessionFile))
	if f.Skipped > 0 {
		fmt.Fprintf(&b, "- unreadable lines skipped: %d\n", f.Skipped)
	}
	b.WriteString("\n")
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return oneLine(s)
}

func section(title, body string) string {
	return "## " + title + "\n\n" + body + "\n"
}

func taskSection(c *Collector) string {
	if len(c.first) == 0 {
		return section("Task (first prompts)", "No prompt recorded.\n")
	}
	return section("Task (first prompts)", quotes(c.first))
}

func latestSection(c *Collector) string {
	if len(c.latest) == 0 {
		return section("Latest prompts", "None after the first ones.\n")
	}
	body := quotes(c.latest)
	if skipped := c.prompts - len(c.first) - len(c.latest); skipped > 0 {
		body = fmt.Sprintf("(%d prompts between the first and these left out)\n\n", skipped) + body
	}
	return section("Latest prompts", body)
}

func replySection(c *Collector) string {
	if c.reply == "" {
		return section("Last assistant message", "None recorded.\n")
	}
	return section("Last assistant message", quote(c.reply))
}

func todoSection(c *Collector) string {
	if !c.hasTodos {
		return section("Open todo and plan items", "The session recorded no todo list or plan.\n")
	}
	var b strings.Builder
	done := 0
	for _, t := range c.todos {
		if t.Done() {
			done++
			continue
		}
		fmt.Fprintf(&b, "- [%s] %s\n", oneLine(t.Status), oneLine(t.Text))
	}
	if b.Len() == 0 {
		b.WriteString("None open.\n")
	}
	if done > 0 {
		fmt.Fprintf(&b, "\n(%d done)\n", done)
	}
	return section("Open todo and plan items", b.String())
}

func fileSection(title string, r *recent) string {
	names, more := r.listed()
	if len(names) == 0 {
		return section(title, "None recorded.\n")
	}
	var b strings.Builder
	if more > 0 {
		fmt.Fprintf(&b, "(%d more, less recent, left out)\n", more)
	}
	for _, n := range names {
		fmt.Fprintf(&b, "- %s\n", code(n))
	}
	return section(title, b.String())
}

func commandSection(c *Collector) string {
	if len(c.commands) == 0 {
		return section("Commands run", "None recorded.\n")
	}
	var b strings.Builder
	if more := c.ncmds - len(c.commands); more > 0 {
		fmt.Fprintf(&b, "(%d earlier left out)\n", more)
	}
	for _, cmd := range c.commands {
		fmt.Fprintf(&b, "- %s\n", code(cmd))
	}
	return section("Commands run", b.String())
}

func toolSection(c *Collector) string {
	if c.calls == 0 {
		return section("Tool calls", "None recorded.\n")
	}
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", oneLine(n), c.tools[n])
	}
	return section("Tool calls", fmt.Sprintf("%d in all: %s\n", c.calls, strings.Join(parts, ", ")))
}

func gitSection(g Git) string {
	if g.Unavailable != "" {
		return section("Git", "No git state: "+oneLine(g.Unavailable)+".\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- branch: %s\n", orUnknown(g.Branch))
	if len(g.Changed) == 0 {
		b.WriteString("- changed files: none\n")
		return section("Git", b.String())
	}
	b.WriteString("- changed files (`git status --porcelain`):\n")
	for i, l := range g.Changed {
		if i == MaxChangedFiles {
			fmt.Fprintf(&b, "  - … %d more\n", len(g.Changed)-i)
			break
		}
		fmt.Fprintf(&b, "  - %s\n", code(Truncate(l, MaxLineBytes)))
	}
	return section("Git", b.String())
}

// quotes renders texts as block quotes separated by blank lines.
func quotes(texts []string) string {
	parts := make([]string, len(texts))
	for i, t := range texts {
		parts[i] = quote(t)
	}
	return strings.Join(parts, "\n")
}

// quote renders text as a markdown block quote.
func quote(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+strings.TrimRight(l, "\r"), " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// code renders s as inline code on one line, with a fence longer than any
// run of backticks in it.
func code(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// oneLine replaces line breaks and tabs by spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}

func itoa(n int) string { return strconv.Itoa(n) }
