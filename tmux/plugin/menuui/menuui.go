// Package menuui is the task menu the tmux plugin opens in a popup (prefix
// T, `qtask ui`): a full-screen list in any terminal, with its keys, its
// cursor, its confirmation and its layout. It sits beside the plugin's
// display-menu because it is the same menu, but it runs no tmux and knows
// no task: it lists the rows a Source gives it and asks the Source to act,
// so cmd/qtask adapts the task store to it and the logic is tested with a
// fake.
package menuui

import (
	"context"
	"fmt"
	"os/exec"
	"unicode/utf8"
)

// Row is a task as the menus list it. Its fields reach the terminal as
// they are: the Source gives them free of control characters.
type Row struct {
	ID      string
	Status  string // short: "running", "failed (3)"; the status command has the reason
	Runtime string // formatted: "1m05s"
	Label   string // the name, or the command
	Running bool
}

// Source is what the menu lists and how it acts on a row. Notes (what an
// action said) reach the screen as they are, as Row's fields do.
type Source interface {
	// Rows lists the tasks in the order shown.
	Rows(ctx context.Context) ([]Row, error)
	// Row reads one task afresh: the list on the screen may be a refresh
	// old when a key acts on it.
	Row(ctx context.Context, id string) (Row, error)
	// Viewable says why View cannot show a running task here (nil if it
	// can), so the menu says so instead of closing with its popup before
	// the reason could be read.
	Viewable(ctx context.Context, id string) error
	// Stop and Remove act and return what to tell the user; force removes
	// a running task (stopping it first).
	Stop(ctx context.Context, id string) string
	Remove(ctx context.Context, id string, force bool) string
	// View, Log and Follow are the programs that take the terminal to show
	// the task's pane, read its log, follow it.
	View(id string) *exec.Cmd
	Log(id string) *exec.Cmd
	Follow(id string) *exec.Cmd
}

// MaxStatusWidth bounds the status column of tmux's 72-column menu: a
// monitor's status ("completed (max events reached, 1000 events)") would
// otherwise leave no room for the names. It fits "cancelled (window
// killed)"; the popup, wider, gives the column more.
const MaxStatusWidth = 25

// Line is how r shows in the menus, tmux's and the popup's: id, status in
// a column of statusWidth (see StatusWidth; 0: as long as it is), runtime
// and label. A wider status is cut, so that the runtime and label still
// line up with the other rows'.
func (r Row) Line(statusWidth int) string {
	status := r.Status
	if statusWidth > 0 && utf8.RuneCountInString(status) > statusWidth {
		status = string([]rune(status)[:statusWidth-1]) + "…"
	}
	return fmt.Sprintf("%-8s  %-*s  %8s  %s", r.ID, statusWidth, status, r.Runtime, r.Label)
}

// StatusWidth is the width of the menus' status column: the widest status
// in rows, so that the runtimes and labels line up whatever the mix
// ("running" beside "completed (exit 0)"), up to limit.
func StatusWidth(rows []Row, limit int) int {
	width := 0
	for _, r := range rows {
		width = max(width, utf8.RuneCountInString(r.Status))
	}
	return min(width, limit)
}
