package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks"
)

// tableStyle is how `ls` lays out its table.
type tableStyle struct {
	wide  bool // the OUTPUT column too, nothing cut
	width int  // the terminal's columns; 0 (not a terminal): nothing cut
	color bool // colour the status
}

// minCommandWidth is the narrowest the COMMAND column is cut to.
const minCommandWidth = 12

// writeTaskTable writes ls's table: ID, NAME (when any task has one),
// STATUS in its short form, RUNTIME, COMMAND cut to fit the terminal, and
// OUTPUT only when wide.
func writeTaskTable(w io.Writer, list []*tasks.Task, style tableStyle) {
	now := time.Now()
	header := []string{"ID", "NAME", "STATUS", "RUNTIME", "COMMAND", "OUTPUT"}
	rows := make([][]string, len(list))
	named := false
	for i, t := range list {
		named = named || t.Name != ""
		rows[i] = []string{displayValue(t.ID), displayCommand(t.Name, 24), shortStatus(t),
			formatRuntime(t.Runtime(now)), displayCommand(t.Command, 4096), displayValue(t.OutputPath)}
	}
	cols := []int{0, 1, 2, 3, 4}
	if !named {
		cols = []int{0, 2, 3, 4}
	}
	if style.wide {
		cols = append(cols, 5)
	}
	widths := make([]int, len(header))
	for _, c := range cols {
		widths[c] = utf8.RuneCountInString(header[c])
		for _, r := range rows {
			widths[c] = max(widths[c], utf8.RuneCountInString(r[c]))
		}
	}
	if !style.wide && style.width > 0 {
		used := 0
		for _, c := range cols[:len(cols)-1] {
			used += widths[c] + 2
		}
		widths[4] = max(min(widths[4], style.width-used), minCommandWidth)
	}
	line := func(cells []string, status *tasks.Task) {
		var b strings.Builder
		for i, c := range cols {
			cell := cells[c]
			if c == 4 && !style.wide && utf8.RuneCountInString(cell) > widths[4] {
				cell = string([]rune(cell)[:widths[4]-1]) + "…"
			}
			pad := widths[c] - utf8.RuneCountInString(cell)
			if c == 2 && status != nil && style.color {
				cell = statusColor(status) + cell + "\x1b[0m"
			}
			b.WriteString(cell)
			if i < len(cols)-1 {
				b.WriteString(strings.Repeat(" ", pad+2))
			}
		}
		fmt.Fprintln(w, b.String())
	}
	line(header, nil)
	for i, r := range rows {
		line(r, list[i])
	}
}

// shortStatus fits a status in a column without changing its meaning:
// "failed (127)", "failed (lost)"; `qtask status` gives the reason. A lost
// task says so even when it has an exit code (a killed pane's command dies
// of SIGHUP, 129): the code would pass it off as the command's own end.
func shortStatus(t *tasks.Task) string {
	switch {
	case t.Status != tasks.StatusFailed:
		return t.StatusText()
	case strings.HasPrefix(t.Error, "lost"):
		return "failed (lost)"
	case t.ExitCode != nil:
		return fmt.Sprintf("failed (%d)", *t.ExitCode)
	}
	return "failed"
}

// statusColor is the SGR for a status: green done, red failed, yellow
// running, dim cancelled.
func statusColor(t *tasks.Task) string {
	switch t.Status {
	case tasks.StatusCompleted:
		return "\x1b[32m"
	case tasks.StatusFailed:
		return "\x1b[31m"
	case tasks.StatusRunning:
		return "\x1b[33m"
	}
	return "\x1b[2m"
}

// terminalWidth is w's width in columns when it is a terminal, else 0.
func terminalWidth(w io.Writer) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil || ws.Col == 0 {
		return 0
	}
	return int(ws.Col)
}
