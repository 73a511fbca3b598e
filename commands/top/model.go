package top

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// Actions are the operations top performs on a session. The CLI passes
// the functions its own commands use (abort, pause, resume, renew), so a
// key in top and the command leave the same receipts.
type Actions interface {
	// Control sends op ("abort", "pause", "resume") to the session's live
	// wrapper and returns its answer, one line.
	Control(ctx context.Context, id, op string) (string, error)
	// Renew renews the session with the note or payload envelope files
	// (none: no payload), fresh or resumed, and returns the outcome, one
	// line.
	Renew(ctx context.Context, id string, payloadFiles []string, resume bool) (string, error)
}

// mode is what the keyboard is talking to.
type mode int

const (
	modeTable        mode = iota
	modeFilter            // typing the filter
	modeRenewPayload      // typing the payload file of a renewal
	modeRenewMode         // choosing fresh or resume
	modeConfirmAbort      // y/N
	modeReceipts          // the selected session's receipts, following
)

// Messages.
type (
	// RowsMsg carries the rows after the state directory changed.
	RowsMsg []Row
	// clockMsg refreshes the relative times.
	clockMsg time.Time
	// actionMsg is an action's result.
	actionMsg struct {
		id, text string
		err      error
	}
)

// DefaultRecent is how long top shows a session after it ended.
const DefaultRecent = topview.DefaultRecent

// Config is what a Model needs besides its rows.
type Config struct {
	Root string
	// Home is written ~ at the start of folders.
	Home    string
	Actions Actions
	Now     func() time.Time
	// All shows every ended session; otherwise ended sessions are shown
	// for Recent after they ended.
	All    bool
	Recent time.Duration
	// Clock is the refresh interval of relative times (0: none, for
	// tests).
	Clock time.Duration
	// ReceiptLine prints one receipt in the receipts view (the CLI passes
	// the line of `lifeloop receipts` on a terminal); default: time,
	// sequence and event.
	ReceiptLine func(contract.LifecycleReceipt) string
	// Where is what the title line names after the counts (default:
	// Root), read at every redraw: the fleet view says its broker and
	// queue there, and whether the broker answers.
	Where func() string
	// Getenv reads top's own environment ($TMUX: whether top runs inside
	// tmux, for the o key's command); default: nothing set.
	Getenv func(string) string
}

// Model is the interactive top.
type Model struct {
	cfg           Config
	all           []Row
	rows          []Row // after the filter
	width, height int
	cursor        int
	selected      string
	offset        int // first row shown
	mode          mode
	filter        string
	input         string
	payload       string
	target        Row
	message       string
	busy          int // actions running
	// the receipts view
	recID    string
	recLines []string
	recSeq   uint64
	recTop   int // scroll position; -1 follows the end
}

// NewModel returns a model over rows.
func NewModel(cfg Config, rows []Row) *Model {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Recent == 0 {
		cfg.Recent = DefaultRecent
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.ReceiptLine == nil {
		cfg.ReceiptLine = func(r contract.LifecycleReceipt) string {
			return fmt.Sprintf("%s %s", time.Unix(r.AtEpochS, 0).UTC().Format(time.TimeOnly), r.Event)
		}
	}
	m := &Model{cfg: cfg, width: 80, height: 24, recTop: -1}
	m.setRows(rows)
	return m
}

// Init starts the clock.
func (m *Model) Init() tea.Cmd { return m.clock() }

func (m *Model) clock() tea.Cmd {
	if m.cfg.Clock <= 0 {
		return nil
	}
	return tea.Tick(m.cfg.Clock, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// Rows returns the rows shown (after filter), for tests.
func (m *Model) Rows() []Row { return m.rows }

func (m *Model) setRows(rows []Row) {
	m.all = rows
	m.applyFilter()
}

func (m *Model) applyFilter() {
	now := m.cfg.Now()
	m.rows = m.rows[:0:0]
	f := strings.ToLower(m.filter)
	for _, r := range m.all {
		if !r.Shown(now, m.cfg.All, m.cfg.Recent) {
			continue
		}
		if f != "" && !matches(r, f) {
			continue
		}
		m.rows = append(m.rows, r)
	}
	// Keep the selection on the same session.
	m.cursor = min(m.cursor, max(len(m.rows)-1, 0))
	for i, r := range m.rows {
		if r.ID == m.selected {
			m.cursor = i
			break
		}
	}
	if len(m.rows) > 0 {
		m.selected = m.rows[m.cursor].ID
	}
}

// matches reports whether the filter (lower case) is in the row's
// harness, folder, state, id, attention state ("needs_permission") or
// machine (the fleet view's).
func matches(r Row, f string) bool {
	attn := ""
	if r.Attention != nil {
		attn = string(r.Attention.State)
	}
	name := ""
	if r.External != nil {
		name = r.External.Name
	}
	for _, s := range []string{r.Harness, r.Cwd, r.DisplayState(), r.ID, attn, r.Machine, name} {
		if strings.Contains(strings.ToLower(s), f) {
			return true
		}
	}
	return false
}

// Update handles one message.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case RowsMsg:
		m.setRows(msg)
		if m.mode == modeReceipts {
			m.readReceipts()
		}
	case clockMsg:
		m.applyFilter() // ended sessions age out
		return m, m.clock()
	case watchErrMsg:
		m.message = "live updates stopped: " + msg.err.Error()
	case actionMsg:
		m.busy--
		if msg.err != nil {
			m.message = fmt.Sprintf("%s: %v", topview.ShortID(msg.id), msg.err)
		} else {
			m.message = msg.text
		}
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	if key == "ctrl+c" {
		return m, tea.Quit
	}
	switch m.mode {
	case modeFilter:
		switch key {
		case "enter":
			m.mode = modeTable
		case "esc":
			m.filter, m.mode = "", modeTable
		case "backspace":
			m.filter = dropLast(m.filter)
		default:
			m.filter += k.Text
		}
		m.applyFilter()
		return m, nil
	case modeRenewPayload:
		switch key {
		case "enter":
			m.payload, m.mode = strings.TrimSpace(m.input), modeRenewMode
		case "esc":
			m.mode, m.message = modeTable, "renewal cancelled"
		case "backspace":
			m.input = dropLast(m.input)
		default:
			m.input += k.Text
		}
		return m, nil
	case modeRenewMode:
		switch key {
		case "f", "enter":
			return m, m.renew(false)
		case "r":
			return m, m.renew(true)
		case "esc", "q", "n":
			m.mode, m.message = modeTable, "renewal cancelled"
		}
		return m, nil
	case modeConfirmAbort:
		m.mode = modeTable
		if key == "y" || key == "Y" {
			return m, m.control(m.target, "abort")
		}
		m.message = "abort cancelled"
		return m, nil
	case modeReceipts:
		switch key {
		case "q", "esc", "enter":
			m.mode, m.recLines = modeTable, nil
		case "up", "k":
			if m.recTop < 0 {
				m.recTop = max(len(m.recLines)-m.bodyHeight(), 0)
			}
			m.recTop = max(m.recTop-1, 0)
		case "down", "j":
			if m.recTop >= 0 {
				m.recTop++
				if m.recTop >= len(m.recLines)-m.bodyHeight() {
					m.recTop = -1 // back at the end: follow
				}
			}
		case "G", "end":
			m.recTop = -1
		}
		return m, nil
	}
	switch key {
	case "q":
		return m, tea.Quit
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(1)
	case "home", "g":
		m.move(-len(m.rows))
	case "end", "G":
		m.move(len(m.rows))
	case "/":
		m.mode, m.filter = modeFilter, "" // a new filter
		m.applyFilter()
	case "esc":
		m.filter, m.message = "", ""
		m.applyFilter()
	case "n":
		m.nextNeedingPerson()
		return m, nil
	}
	r, ok := m.current()
	if !ok {
		return m, nil
	}
	if r.External != nil {
		switch key {
		case "enter", "r", "a", "p", "o":
			m.message = externalLine(r)
		}
		return m, nil
	}
	switch key {
	case "enter":
		if m.cfg.Root == "" {
			m.message = fmt.Sprintf("%s: its receipts are on its machine (lifeloop receipts %s there)", topview.ShortID(r.ID), r.ID)
			break
		}
		m.mode, m.recID, m.recLines, m.recSeq, m.recTop = modeReceipts, r.ID, nil, 0, -1
		m.readReceipts()
	case "r":
		if r.Ended() {
			m.message = fmt.Sprintf("%s has ended (%s); renew needs a running session", topview.ShortID(r.ID), r.State)
			break
		}
		m.target, m.input, m.mode = r, "", modeRenewPayload
	case "o":
		m.message, _ = topview.OpenCommand(r, m.cfg.Getenv)
	case "a":
		if r.Ended() {
			m.message = fmt.Sprintf("%s has already ended (%s)", topview.ShortID(r.ID), r.State)
			break
		}
		m.target, m.mode = r, modeConfirmAbort
	case "p":
		switch r.State {
		case string(statedir.StatePaused):
			return m, m.control(r, "resume")
		case string(statedir.StateRunning):
			return m, m.control(r, "pause")
		}
		m.message = fmt.Sprintf("%s is %s: only a running session pauses and a paused one resumes", topview.ShortID(r.ID), r.State)
	}
	return m, nil
}

// externalLine is what the keys say of a session lifeloop does not
// supervise: where it was listed from, and how to open it.
func externalLine(r Row) string {
	s := fmt.Sprintf("%s is not supervised by lifeloop (listed by %s): no receipts, no actions", r.ID, r.External.Source)
	if r.External.Attach != "" {
		s += "; open it with " + r.External.Attach
	}
	return s
}

// nextNeedingPerson selects the next session after the selected one
// (wrapping round) that waits for a person, and says what it waits for.
func (m *Model) nextNeedingPerson() {
	for i := 1; i <= len(m.rows); i++ {
		j := (m.cursor + i) % len(m.rows)
		if m.rows[j].NeedsPerson() {
			m.cursor, m.selected = j, m.rows[j].ID
			m.message = ""
			return
		}
	}
	m.message = "no session waits for a person"
}

func dropLast(s string) string {
	r := []rune(s)
	if len(r) == 0 {
		return s
	}
	return string(r[:len(r)-1])
}

func (m *Model) move(d int) {
	if len(m.rows) == 0 {
		return
	}
	m.cursor = max(0, min(len(m.rows)-1, m.cursor+d))
	m.selected = m.rows[m.cursor].ID
}

func (m *Model) current() (Row, bool) {
	if len(m.rows) == 0 {
		return Row{}, false
	}
	return m.rows[m.cursor], true
}

// control runs one control operation in the background.
func (m *Model) control(r Row, op string) tea.Cmd {
	if m.cfg.Actions == nil {
		m.message = "no actions in this view"
		return nil
	}
	m.busy++
	m.message = fmt.Sprintf("%s %s…", op, topview.ShortID(r.ID))
	acts, id := m.cfg.Actions, r.ID
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		text, err := acts.Control(ctx, id, op)
		return actionMsg{id: id, text: text, err: err}
	}
}

// renew starts the renewal of the target in the background; its progress
// shows in the row (state renewing, the renewal column) as its receipts
// land, and its outcome in the message line.
func (m *Model) renew(resume bool) tea.Cmd {
	m.mode = modeTable
	if m.cfg.Actions == nil {
		m.message = "no actions in this view"
		return nil
	}
	var files []string
	if m.payload != "" {
		files = []string{m.payload}
	}
	how := "fresh"
	if resume {
		how = "resumed"
	}
	m.busy++
	m.message = fmt.Sprintf("renewing %s (%s, %d payload file(s))…", topview.ShortID(m.target.ID), how, len(files))
	acts, id := m.cfg.Actions, m.target.ID
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		text, err := acts.Renew(ctx, id, files, resume)
		return actionMsg{id: id, text: text, err: err}
	}
}

// readReceipts appends the receipts of the viewed session recorded since
// the last read (the view follows the ledger on each change).
func (m *Model) readReceipts() {
	if m.cfg.Root == "" || m.recID == "" {
		return
	}
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(m.cfg.Root, m.recID), m.recSeq) {
		if err != nil {
			continue
		}
		m.recLines = append(m.recLines, m.cfg.ReceiptLine(e.Receipt))
		m.recSeq = e.Sequence
	}
	if over := len(m.recLines) - 2000; over > 0 {
		m.recLines = append(m.recLines[:0:0], m.recLines[over:]...)
		if m.recTop > 0 {
			m.recTop = max(m.recTop-over, 0)
		}
	}
}

func (m *Model) bodyHeight() int { return max(m.height-4, 1) }

// View draws the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	v.WindowTitle = "lifeloop top"
	return v
}

// Render is the screen as a string of m.height lines of m.width cells.
func (m *Model) Render() string {
	now := m.cfg.Now()
	w, h := max(m.width, 20), max(m.height, 5)
	lines := make([]string, 0, h)
	where := m.cfg.Root
	if m.cfg.Where != nil {
		where = m.cfg.Where()
	}
	head := topview.Title(m.rows, where)
	if m.filter != "" || m.mode == modeFilter {
		head += " · filter: " + m.filter
	}
	if m.mode == modeReceipts {
		head = "receipts of " + m.recID + " (following)"
	}
	lines = append(lines, styleHeader.Render(fit(head, w)))
	body := h - 3
	if m.mode == modeReceipts {
		top := m.recTop
		if top < 0 || top > len(m.recLines)-body {
			top = max(len(m.recLines)-body, 0)
		}
		end := min(top+body, len(m.recLines))
		for _, l := range m.recLines[top:end] {
			lines = append(lines, fit(l, w))
		}
	} else {
		tbl := Table(topview.WithHome(m.rows, m.cfg.Home), now, w, m.cursor)
		lines = append(lines, tbl[0])
		rows := tbl[1:]
		visible := body - 1
		total, hasTotal := TotalLine(m.rows, w)
		if hasTotal = hasTotal && visible > 1; hasTotal {
			visible-- // the total line stays under the rows shown
		}
		if m.cursor < m.offset {
			m.offset = m.cursor
		}
		if m.cursor >= m.offset+visible {
			m.offset = m.cursor - visible + 1
		}
		m.offset = max(0, min(m.offset, max(len(rows)-visible, 0)))
		end := min(m.offset+visible, len(rows))
		lines = append(lines, rows[m.offset:end]...)
		if hasTotal {
			lines = append(lines, total)
		}
		if len(m.rows) == 0 {
			lines = append(lines, fit("no sessions", w))
		}
	}
	for len(lines) < h-2 {
		lines = append(lines, strings.Repeat(" ", w))
	}
	lines = append(lines, styleMessage.Render(fit(m.prompt(), w)), styleHelp.Render(fit(m.help(), w)))
	return strings.Join(lines, "\n")
}

func (m *Model) prompt() string {
	switch m.mode {
	case modeFilter:
		return "filter (harness, folder, state): " + m.filter + "▏"
	case modeRenewPayload:
		return fmt.Sprintf("renew %s: note (text or markdown) or payload envelope file (enter for none): %s▏", topview.ShortID(m.target.ID), m.input)
	case modeRenewMode:
		p := "no note or payload"
		if m.payload != "" {
			p = m.payload
		}
		return fmt.Sprintf("renew %s with %s: [f]resh or [r]esumed conversation? (esc cancels)", topview.ShortID(m.target.ID), p)
	case modeConfirmAbort:
		return fmt.Sprintf("abort %s (%s, %s)? y/N", topview.ShortID(m.target.ID), m.target.Harness, m.target.State)
	}
	if r, ok := m.current(); ok && m.message == "" && m.mode == modeTable {
		// What the selected session waits for, else what the renewal
		// policy did for it.
		if line := topview.AttentionLine(r, m.cfg.Now()); line != "" {
			return line
		}
		return topview.PolicyLine(r)
	}
	return m.message
}

func (m *Model) help() string {
	switch m.mode {
	case modeReceipts:
		return "↑↓ scroll  G follow  esc back"
	case modeFilter, modeRenewPayload:
		return "enter accept  esc cancel"
	case modeTable, modeRenewMode, modeConfirmAbort:
	}
	if m.width < 100 {
		return "n waiting  ⏎ receipts  o open  r renew  a abort  p pause  / filter  q quit"
	}
	return "↑↓/jk move  n next waiting  enter receipts  o open  r renew  a abort  p pause/resume  / filter  q quit"
}
