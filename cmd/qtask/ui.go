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

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

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
(Ctrl+C returns); s stops it; x removes a finished task and its output
(qtask rm); q or Esc quits. The tmux plugin opens it in a
popup with prefix T.`,
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
	note     string // the result of the last action
	client   string // the tmux client Enter switches; "" the current one
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

// load re-reads the tasks.
func (u *ui) load() {
	list, _, err := u.store.List(tasks.Filter{})
	if err != nil {
		u.note = err.Error()
		return
	}
	u.list = menuOrder(list)
	if u.index() < 0 && len(list) > 0 {
		u.selected = list[0].ID
	}
}

func (u *ui) index() int {
	return slices.IndexFunc(u.list, func(t *tasks.Task) bool { return t.ID == u.selected })
}

func (u *ui) draw() {
	rows, cols := 24, 80
	if ws, err := unix.IoctlGetWinsize(int(u.tty.Fd()), unix.TIOCGWINSZ); err == nil && ws.Row > 0 && ws.Col > 0 {
		rows, cols = int(ws.Row), int(ws.Col)
	}
	var b strings.Builder
	b.WriteString("\x1b[H\x1b[2J")
	line := func(s string) { b.WriteString(displayCommand(s, cols) + "\x1b[K\r\n") }
	line(fmt.Sprintf("qtask: %d tasks", len(u.list)))
	if len(u.list) == 0 {
		line("No background tasks.")
	}
	sel := u.index()
	first := 0
	if visible := rows - 3; sel >= visible {
		first = sel - visible + 1
	}
	now, width := time.Now(), menuStatusWidth(u.list)
	for i := first; i < len(u.list) && i-first < rows-3; i++ {
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
	b.WriteString(fmt.Sprintf("\x1b[%d;1H", rows))
	help := "↑↓ move  ⏎ view  l log  f follow  s stop  x remove  q quit"
	if u.note != "" {
		help = u.note + "  |  " + help
	}
	b.WriteString(displayCommand(help, cols-1) + "\x1b[K")
	io.WriteString(u.deps.IO.Out, b.String())
}

// key acts on one key; false ends the ui.
func (u *ui) key(ctx context.Context, k string, restore func()) bool {
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
			if t := u.endedTask(id); t != nil && !t.PaneKept {
				// attach would say so and the ui would close with its
				// popup before the line could be read. Read afresh: the
				// list on the screen may be a refresh old.
				u.note = fmt.Sprintf("task %s is not running (%s): l reads its log", id, shortStatus(t))
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
			u.note = quietly(ctx, u.deps.Self, "rm", id) // a running task is refused: the note says so
		}
	}
	return true
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

func isTTY(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// rawMode switches the terminal to byte-at-a-time input without echo and
// returns how to restore it.
func rawMode(tty *os.File) (func(), error) {
	fd := int(tty.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	raw := *old
	raw.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Iflag &^= unix.IXON | unix.ICRNL
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}
