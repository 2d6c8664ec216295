package menuui

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"unicode/utf8"
)

// menu is the menu's state between two keys: what is listed, where the
// cursor is, what the last action said.
type menu struct {
	src      Source
	term     terminal
	list     []Row
	selected string // the id under the cursor, kept across refreshes
	top      int    // the first row shown, for a list taller than the screen
	note     string // the result of the last action
	// removing is a running task x was pressed on: y stops and removes
	// it, any other key keeps it.
	removing string
}

// terminal is what the menu asks of the screen besides a frame: giving it
// to a program (a pager, a follow) and taking it back, and showing a line
// until a key is pressed.
type terminal interface {
	give(cmd *exec.Cmd) error
	pause(line string)
}

// load re-reads the rows. The cursor stays on its task; if that one is
// gone (removed), on the row it was on, now the next task's.
func (m *menu) load(ctx context.Context) {
	list, err := m.src.Rows(ctx)
	if err != nil {
		m.note = err.Error()
		return
	}
	row := max(m.index(), 0)
	m.list = list
	if m.index() < 0 && len(list) > 0 {
		m.selected = list[min(row, len(list)-1)].ID
	}
}

func (m *menu) index() int {
	return slices.IndexFunc(m.list, func(r Row) bool { return r.ID == m.selected })
}

// keysLine is the menu's bottom line.
const keysLine = "↑↓ move  ⏎ view  l log  f follow  s stop  x remove  q quit"

// frame draws the menu on a screen of rows × cols, from its top left.
func (m *menu) frame(rows, cols int) string {
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	line := func(s string) { b.WriteString(cut(s, cols) + "\x1b[K\r\n") }
	line(fmt.Sprintf("qtask: %d tasks", len(m.list)))
	if len(m.list) == 0 {
		line("No background tasks.")
	}
	// The last action's result gets lines of its own above the keys, so
	// a long one (how to reach a task on another server) can be read.
	var note []string
	if m.note != "" {
		note = wrapWords(m.note, cols-1, 3)
	}
	shown := max(rows-3-len(note), 1)
	if len(m.list) > shown {
		shown = max(shown-1, 1) // for the line saying how many more
	}
	m.scroll(shown)
	width := StatusWidth(m.list, max(MaxStatusWidth, (cols-40)/2))
	sel := m.index()
	for i := m.top; i < len(m.list) && i-m.top < shown; i++ {
		mark := "  "
		if i == sel {
			mark = "> "
			b.WriteString("\x1b[7m")
		}
		b.WriteString(cut(mark+m.list[i].Line(width), cols-1))
		b.WriteString("\x1b[0m\x1b[K\r\n")
	}
	if more := moreRows(m.top, len(m.list)-m.top-shown); more != "" {
		line(more)
	}
	fmt.Fprintf(&b, "\x1b[%d;1H", rows-len(note))
	for _, l := range note {
		b.WriteString(cut(l, cols-1) + "\x1b[K\r\n")
	}
	b.WriteString(cut(keysLine, cols-1) + "\x1b[K")
	return b.String()
}

// scroll moves the window of shown rows just enough to keep the cursor in
// it.
func (m *menu) scroll(shown int) {
	if sel := m.index(); sel >= 0 {
		m.top = min(m.top, sel)
		m.top = max(m.top, sel-shown+1)
	}
	m.top = max(min(m.top, len(m.list)-shown), 0)
}

// moreRows is the line saying how many tasks are above and below the rows
// shown ("" when none are).
func moreRows(above, below int) string {
	var parts []string
	if above > 0 {
		parts = append(parts, fmt.Sprintf("↑ %d more", above))
	}
	if below > 0 {
		parts = append(parts, fmt.Sprintf("↓ %d more", below))
	}
	if parts == nil {
		return ""
	}
	return "  " + strings.Join(parts, "  ")
}

// key acts on one key; false ends the menu.
func (m *menu) key(ctx context.Context, k string) bool {
	if id := m.removing; id != "" {
		m.removing = ""
		if k != "y" {
			m.note = "task " + id + " kept"
			return true
		}
		m.note = m.src.Remove(ctx, id, true)
		return true
	}
	i := m.index()
	move := func(to int) {
		if to >= 0 && to < len(m.list) {
			m.selected = m.list[to].ID
		}
	}
	switch k {
	case "q", "\x1b", "\x03":
		return false
	case "\x1b[A", "\x1bOA", "k":
		move(i - 1)
	case "\x1b[B", "\x1bOB", "j":
		move(i + 1)
	case "\r", "l", "f", "s", "x":
		if i < 0 {
			return true
		}
		id := m.selected
		switch k {
		case "\r":
			if why := m.unviewable(ctx, id); why != "" {
				m.note = why
				return true
			}
			m.give("view", m.src.View(id))
			return false // the client now shows the task: the popup's job is done
		case "l":
			m.give("log", m.src.Log(id))
		case "f":
			m.give("follow", m.src.Follow(id))
			if r, err := m.src.Row(ctx, id); err == nil && !r.Running { // not left with Ctrl+C while it runs
				// Its last lines, often the reason it failed, would
				// otherwise be wiped at once by the list.
				m.term.pause("[qtask: task " + id + " ended; press a key to go back to the list]")
			}
		case "s":
			m.note = m.src.Stop(ctx, id)
		case "x":
			if r, err := m.src.Row(ctx, id); err == nil && r.Running {
				m.removing = id
				m.note = fmt.Sprintf("task %s is running: y stops it and removes it with its output, any other key keeps it", id)
				return true
			}
			m.note = m.src.Remove(ctx, id, false)
		}
	}
	return true
}

// unviewable says why Enter cannot show task id ("" if it can): it has
// ended, or the Source cannot show it here. Read afresh: the list on the
// screen may be a refresh old.
func (m *menu) unviewable(ctx context.Context, id string) string {
	r, err := m.src.Row(ctx, id)
	if err != nil {
		return err.Error()
	}
	if !r.Running {
		return fmt.Sprintf("task %s is not running (%s): l reads its log", id, r.Status)
	}
	if err := m.src.Viewable(ctx, id); err != nil {
		return err.Error()
	}
	return ""
}

// give hands the terminal to cmd, the program showing what, and notes a
// failure.
func (m *menu) give(what string, cmd *exec.Cmd) {
	if err := m.term.give(cmd); err != nil {
		m.note = fmt.Sprintf("%s: %v", what, err)
	}
}

// cut keeps the first width runes of s, marking a cut with "…".
func cut(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	return string([]rune(s)[:max(width, 0)]) + "…"
}

// wrapWords breaks s into at most max lines of at most width characters,
// between words where it can; what does not fit is cut (frame marks the
// cut).
func wrapWords(s string, width, max int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) <= width:
			line += " " + w
		default:
			lines, line = append(lines, line), w
		}
	}
	lines = append(lines, line)
	if len(lines) > max {
		lines[max-1] = strings.Join(lines[max-1:], " ")
		lines = lines[:max]
	}
	return lines
}
