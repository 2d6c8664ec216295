package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/qtask/qtask/tasks"
)

// NewCmdUI builds `qtask ui`, the task menu the plugin opens in a popup
// (prefix T); it works in any terminal.
func NewCmdUI(deps *Deps) *cobra.Command {
	var client string
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "A full-screen task list: view, read the log, follow, stop or remove a task",
		Long: `A full-screen list of tasks, running first, then newest first, with status,
runtime and name. Keys: up/down (or k/j) move; Enter views the task's pane
(qtask attach); l reads its log in $PAGER (default less); f follows it
(Ctrl+C returns); s stops it; x removes it and its output (qtask rm; a
running task after y confirms, as qtask rm --force); q or Esc quits. The
tmux plugin opens it in a popup with prefix T.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUI(cmd.Context(), deps, client)
		},
	}
	cmd.Flags().StringVar(&client, "tmux-client", "", "the tmux client Enter switches to a task (the popup's: tmux gives a popup no way to tell)")
	return cmd
}

// uiRefresh is how often the list is re-read while no key is pressed.
const uiRefresh = time.Second

type ui struct {
	deps     *Deps
	store    *tasks.Store
	tty      *os.File
	list     []*tasks.Task
	selected string // the id under the cursor, kept across refreshes
	top      int    // the first row shown, for a list taller than the screen
	note     string // the result of the last action
	client   string // the tmux client Enter switches; "" the current one
	// removing is a running task x was pressed on: y stops and removes
	// it, any other key keeps it.
	removing string
}

func runUI(ctx context.Context, deps *Deps, client string) error {
	store, err := deps.Store(ctx)
	if err != nil {
		return err
	}
	tty, ok := deps.IO.In.(*os.File)
	if !ok || !isTTY(tty) {
		return usageErrorf("ui needs a terminal; use qtask ls to list tasks")
	}
	u := &ui{deps: deps, store: store, tty: tty, client: client}
	restore, err := rawMode(tty)
	if err != nil {
		return err
	}
	defer restore()
	fmt.Fprint(deps.IO.Out, "\x1b[?1049h\x1b[?25l")
	defer fmt.Fprint(deps.IO.Out, "\x1b[?25h\x1b[?1049l")
	for ctx.Err() == nil {
		u.load()
		u.draw()
		in, err := readInput(tty, uiRefresh)
		if err != nil {
			return nil
		}
		for _, k := range splitKeys(in) {
			if !u.key(ctx, k, restore) {
				return nil
			}
		}
	}
	return nil
}

// splitKeys cuts what one read returned into keys: an escape sequence
// (ESC [ x, ESC O x, with parameters) is one key, a lone ESC is Esc, any
// other byte is a key of its own.
func splitKeys(in string) []string {
	var keys []string
	for in != "" {
		n := 1
		if in[0] == 0x1b && len(in) > 2 && (in[1] == '[' || in[1] == 'O') {
			n = 2
			for n < len(in) && (in[n] < 0x40 || in[n] > 0x7e) {
				n++ // parameter and intermediate bytes, up to the final one
			}
			n = min(n+1, len(in))
		}
		keys, in = append(keys, in[:n]), in[n:]
	}
	return keys
}

// load re-reads the tasks. The cursor stays on its task; if that one is
// gone (removed), on the row it was on, now the next task's.
func (u *ui) load() {
	list, _, err := u.store.List(tasks.Filter{})
	if err != nil {
		u.note = err.Error()
		return
	}
	row := max(u.index(), 0)
	u.list = menuOrder(list)
	if u.index() < 0 && len(list) > 0 {
		u.selected = list[min(row, len(list)-1)].ID
	}
}

func (u *ui) index() int {
	return slices.IndexFunc(u.list, func(t *tasks.Task) bool { return t.ID == u.selected })
}

func (u *ui) draw() {
	rows, cols := 24, 80
	if w, h, err := term.GetSize(int(u.tty.Fd())); err == nil && w > 0 && h > 0 {
		rows, cols = h, w
	}
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	line := func(s string) { b.WriteString(displayCommand(s, cols) + "\x1b[K\r\n") }
	line(fmt.Sprintf("qtask: %d tasks", len(u.list)))
	if len(u.list) == 0 {
		line("No background tasks.")
	}
	// The last action's result gets lines of its own above the keys, so
	// a long one (how to reach a task on another server) can be read.
	var note []string
	if u.note != "" {
		note = wrapWords(u.note, cols-1, 3)
	}
	shown := max(rows-3-len(note), 1)
	if len(u.list) > shown {
		shown = max(shown-1, 1) // for the line saying how many more
	}
	u.scroll(shown)
	now, width := time.Now(), menuStatusWidth(u.list, max(maxMenuStatusWidth, (cols-40)/2))
	sel := u.index()
	for i := u.top; i < len(u.list) && i-u.top < shown; i++ {
		t := u.list[i]
		mark := "  "
		if i == sel {
			mark = "> "
		}
		if i == sel {
			b.WriteString("\x1b[7m")
		}
		b.WriteString(displayCommand(mark+menuRow(t, now, width), cols-1))
		b.WriteString("\x1b[0m\x1b[K\r\n")
	}
	if more := moreRows(u.top, len(u.list)-u.top-shown); more != "" {
		line(more)
	}
	b.WriteString(fmt.Sprintf("\x1b[%d;1H", rows-len(note)))
	for _, l := range note {
		b.WriteString(displayCommand(l, cols-1) + "\x1b[K\r\n")
	}
	b.WriteString(displayCommand("↑↓ move  ⏎ view  l log  f follow  s stop  x remove  q quit", cols-1) + "\x1b[K")
	io.WriteString(u.deps.IO.Out, b.String())
}

// scroll moves the window of shown rows just enough to keep the cursor in
// it.
func (u *ui) scroll(shown int) {
	if sel := u.index(); sel >= 0 {
		u.top = min(u.top, sel)
		u.top = max(u.top, sel-shown+1)
	}
	u.top = max(min(u.top, len(u.list)-shown), 0)
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

// key acts on one key; false ends the ui.
func (u *ui) key(ctx context.Context, k string, restore func()) bool {
	if id := u.removing; id != "" {
		u.removing = ""
		if k != "y" {
			u.note = "task " + id + " kept"
			return true
		}
		u.note = quietly(ctx, u.deps.Self, "rm", "--force", id)
		return true
	}
	i := u.index()
	move := func(to int) {
		if to >= 0 && to < len(u.list) {
			u.selected = u.list[to].ID
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
		id := u.selected
		switch k {
		case "\r":
			if why := u.unviewable(id); why != "" {
				// attach would say so and the ui would close with its
				// popup before the line could be read.
				u.note = why
				return true
			}
			u.run(restore, u.deps.Self, u.attachArgs(id)...)
			return false // the client now shows the task: the popup's job is done
		case "l":
			pager := "${PAGER:-less}"
			u.run(restore, "sh", "-c", `"$0" logs "$1" | `+pager, u.deps.Self, id)
		case "f":
			u.run(restore, u.deps.Self, "logs", "-f", id)
			if u.endedTask(id) != nil { // not left with Ctrl+C while it runs
				u.pause("[qtask: task " + id + " ended; press a key to go back to the list]")
			}
		case "s":
			u.note = quietly(ctx, u.deps.Self, "stop", id)
		case "x":
			if t, err := u.store.Get(id); err == nil && t.Running() {
				u.removing = id
				u.note = fmt.Sprintf("task %s is running: y stops it and removes it with its output, any other key keeps it", id)
				return true
			}
			u.note = quietly(ctx, u.deps.Self, "rm", id)
		}
	}
	return true
}

// unviewable says why attach cannot show task id here ("" if it can): it
// has ended, or it runs on another tmux server than the ui's, where
// attaching would nest a tmux client in this one. Read afresh: the list
// on the screen may be a refresh old.
func (u *ui) unviewable(id string) string {
	t, err := u.store.Get(id)
	if err != nil {
		return err.Error()
	}
	if !t.Running() && !t.PaneKept {
		return fmt.Sprintf("task %s is not running (%s): l reads its log", id, shortStatus(t))
	}
	opts := tasks.ShowOptions{Caller: u.deps.Caller(), InTmux: u.deps.tmuxServer(), Client: u.client}
	if _, err := u.store.Show(t, opts); err != nil {
		return err.Error()
	}
	return ""
}

// attachArgs is the attach Enter runs for task id, on the ui's client
// when it was told which (the plugin's popup).
func (u *ui) attachArgs(id string) []string {
	if u.client != "" {
		return []string{"attach", "--tmux-client", u.client, id}
	}
	return []string{"attach", id}
}

// quietly runs a qtask command that needs no terminal (stop, rm) and
// returns what it said, its result or its one-line error, for the ui's
// bottom line or the menu's message.
func quietly(ctx context.Context, self string, args ...string) string {
	out, err := exec.CommandContext(ctx, self, args...).CombinedOutput()
	said := strings.TrimSpace(string(out))
	if err != nil && said == "" {
		said = err.Error()
	}
	return said
}

// menuOrder sorts tasks as the menus show them: running first, then newest
// first.
func menuOrder(list []*tasks.Task) []*tasks.Task {
	slices.SortStableFunc(list, func(a, b *tasks.Task) int {
		if a.Running() != b.Running() {
			if a.Running() {
				return -1
			}
			return 1
		}
		return b.StartedAt.Compare(a.StartedAt)
	})
	return list
}

// run gives the terminal to a program (a pager, a follow) and takes it back.
// Ctrl+C ends that program, not the ui.
func (u *ui) run(restore func(), name string, args ...string) {
	restore()
	fmt.Fprint(u.deps.IO.Out, "\x1b[?25h\x1b[H\x1b[2J")
	signal.Ignore(syscall.SIGINT)
	cmd := exec.Command(name, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = u.tty, u.deps.IO.Out, u.deps.IO.ErrOut
	if err := cmd.Run(); err != nil {
		u.note = fmt.Sprintf("%s: %v", args[0], err)
	}
	signal.Reset(syscall.SIGINT)
	fmt.Fprint(u.deps.IO.Out, "\x1b[?25l")
	rawMode(u.tty)
}

// endedTask is task id, read afresh, if it has ended; nil while it runs
// (or once it is gone).
func (u *ui) endedTask(id string) *tasks.Task {
	u.load()
	if i := u.index(); i >= 0 && u.list[i].ID == id && !u.list[i].Running() {
		return u.list[i]
	}
	return nil
}

// pause shows line below what a program left on the screen and waits for a
// key: a follow that ends with its task would otherwise have its last
// lines, often the reason it failed, wiped at once by the list.
func (u *ui) pause(line string) {
	fmt.Fprint(u.deps.IO.Out, "\r\n"+line)
	for {
		k, err := readInput(u.tty, time.Hour)
		if err != nil || k != "" {
			return
		}
	}
}

// readInput waits up to timeout for keys ("" if none came). Reading only
// here, never in the background, leaves the terminal's input to the pager
// or follow that run gives it to.
func readInput(tty *os.File, timeout time.Duration) (string, error) {
	fds := []unix.PollFd{{Fd: int32(tty.Fd()), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(timeout.Milliseconds()))
	if err != nil && err != unix.EINTR {
		return "", err
	}
	if n <= 0 {
		return "", nil
	}
	buf := make([]byte, 64)
	n, err = tty.Read(buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

func isTTY(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// rawMode switches the terminal to byte-at-a-time input without echo or
// signal keys (Ctrl+C arrives as a key) and returns how to restore it.
// Output processing is off too: the ui ends its lines with \r\n itself.
func rawMode(tty *os.File) (func(), error) {
	fd := int(tty.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return func() { term.Restore(fd, old) }, nil
}

// wrapWords breaks s into at most max lines of at most width characters,
// between words where it can; what does not fit is cut (displayCommand
// marks the cut).
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
