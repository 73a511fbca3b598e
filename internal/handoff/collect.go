// Package handoff writes a handoff note: a bounded, deterministic
// markdown summary of a harness session, made from the items a harness's
// HandoffReader reads out of its session file, the session's ledger facts
// and its working folder's git state. It asks no model and types nothing
// into the harness; the same inputs always give the same note (no clock,
// no map order).
package handoff

import (
	"sort"
	"unicode/utf8"

	"github.com/lifeloop/lifeloop/adapters"
)

// Limits of what a Collector keeps (and so of the note's sections).
const (
	// FirstPrompts is how many of the session's first prompts make its
	// task; LatestPrompts how many of its last ones follow them.
	FirstPrompts  = 3
	LatestPrompts = 3
	// MaxFiles is how many files read (and edited) are listed, the most
	// recently used; MaxCommands how many commands, the last ones run.
	MaxFiles    = 30
	MaxCommands = 20
	// MaxTodos is how many todo or plan items are kept.
	MaxTodos = 50
	// MaxTools is how many distinct tool names are counted.
	MaxTools = 50
	// MaxPromptBytes, MaxReplyBytes, MaxLineBytes bound one prompt, the
	// last assistant message, and one path, command or todo item.
	MaxPromptBytes = 2000
	MaxReplyBytes  = 4000
	MaxLineBytes   = 300
)

// Collector keeps, from a stream of handoff items, what a note shows, in
// memory bounded by the limits above whatever the stream's length.
type Collector struct {
	first    []string
	latest   []string // ring of the last LatestPrompts prompts
	prompts  int
	reply    string
	todos    []adapters.HandoffTodo
	hasTodos bool
	reads    recent
	edits    recent
	commands []string // ring of the last MaxCommands
	ncmds    int
	tools    map[string]int
	calls    int
}

// Add takes one item.
func (c *Collector) Add(it adapters.HandoffItem) {
	switch it.Kind {
	case adapters.HandoffPrompt:
		c.addPrompt(it.Text)
	case adapters.HandoffReply:
		if it.Text != "" {
			c.reply = Truncate(it.Text, MaxReplyBytes)
		}
	case adapters.HandoffTodos:
		c.hasTodos = true
		c.todos = c.todos[:0]
		for _, t := range it.Todos {
			if len(c.todos) == MaxTodos {
				break
			}
			c.todos = append(c.todos, adapters.HandoffTodo{Text: Truncate(t.Text, MaxLineBytes), Status: Truncate(t.Status, 40)})
		}
	case adapters.HandoffTool:
		c.addTool(it)
	}
}

func (c *Collector) addPrompt(text string) {
	if text == "" {
		return
	}
	text = Truncate(text, MaxPromptBytes)
	c.prompts++
	if len(c.first) < FirstPrompts {
		c.first = append(c.first, text)
		return
	}
	if len(c.latest) < LatestPrompts {
		c.latest = append(c.latest, text)
		return
	}
	copy(c.latest, c.latest[1:])
	c.latest[len(c.latest)-1] = text
}

func (c *Collector) addTool(it adapters.HandoffItem) {
	c.calls++
	if it.Tool != "" {
		if c.tools == nil {
			c.tools = map[string]int{}
		}
		if _, ok := c.tools[it.Tool]; ok || len(c.tools) < MaxTools {
			c.tools[it.Tool]++
		}
	}
	for _, p := range it.Reads {
		c.reads.add(Truncate(p, MaxLineBytes))
	}
	for _, p := range it.Edits {
		c.edits.add(Truncate(p, MaxLineBytes))
	}
	if it.Command != "" {
		c.ncmds++
		cmd := Truncate(it.Command, MaxLineBytes)
		if len(c.commands) < MaxCommands {
			c.commands = append(c.commands, cmd)
		} else {
			copy(c.commands, c.commands[1:])
			c.commands[len(c.commands)-1] = cmd
		}
	}
}

// recent is a set of names kept in order of last use, bounded: it keeps
// at most 4×MaxFiles names and lists the MaxFiles most recent.
type recent struct {
	last  map[string]int
	clock int
	total int // distinct names seen (a pruned name seen again counts again)
}

func (r *recent) add(name string) {
	if name == "" {
		return
	}
	if r.last == nil {
		r.last = map[string]int{}
	}
	if _, ok := r.last[name]; !ok {
		r.total++
	}
	r.clock++
	r.last[name] = r.clock
	if len(r.last) > 4*MaxFiles {
		for _, n := range r.ordered()[:len(r.last)-MaxFiles] {
			delete(r.last, n)
		}
	}
}

// ordered returns the names, least recently used first.
func (r *recent) ordered() []string {
	names := make([]string, 0, len(r.last))
	for n := range r.last {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return r.last[names[i]] < r.last[names[j]] })
	return names
}

// listed returns the MaxFiles most recent names (least recent first) and
// how many more were seen.
func (r *recent) listed() ([]string, int) {
	names := r.ordered()
	if len(names) > MaxFiles {
		names = names[len(names)-MaxFiles:]
	}
	return names, r.total - len(names)
}

// Truncate returns s cut to at most max bytes on a UTF-8 boundary, with a
// marker saying how many bytes were left out when it was cut.
func Truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	marker := func(n int) string { return " …[" + itoa(n) + " bytes cut]" }
	keep := max - len(marker(len(s)))
	if keep < 0 {
		keep = 0
	}
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + marker(len(s)-keep)
}

// Collect reads the session file at path through r into a Collector and
// returns it with the number of lines skipped.
func Collect(r adapters.HandoffReader, path string) (*Collector, int, error) {
	c := &Collector{}
	skipped, err := r.ReadHandoff(path, c.Add)
	return c, skipped, err
}
