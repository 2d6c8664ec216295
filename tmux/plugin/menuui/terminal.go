package menuui

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// refresh is how often the list is re-read while no key is pressed.
const refresh = time.Second

// Run shows the menu of src full-screen on the terminal tty (its output
// going to out, a program's errors to errOut) until q, Esc, Ctrl+C, a
// view, or ctx ends it. The terminal is left as it was found.
func Run(ctx context.Context, tty *os.File, out, errOut io.Writer, src Source) error {
	restore, err := rawMode(tty)
	if err != nil {
		return err
	}
	t := &screen{tty: tty, out: out, errOut: errOut, restore: restore}
	defer restore()
	fmt.Fprint(out, "\x1b[?1049h\x1b[?25l")
	defer fmt.Fprint(out, "\x1b[?25h\x1b[?1049l")
	m := &menu{src: src, term: t}
	for ctx.Err() == nil {
		m.load(ctx)
		rows, cols := 24, 80
		if w, h, err := term.GetSize(int(tty.Fd())); err == nil && w > 0 && h > 0 {
			rows, cols = h, w
		}
		io.WriteString(out, m.frame(rows, cols))
		in, err := readInput(tty, refresh)
		if err != nil {
			return nil
		}
		for _, k := range SplitKeys(in) {
			if !m.key(ctx, k) {
				return nil
			}
		}
	}
	return nil
}

// screen is the real terminal the menu runs on.
type screen struct {
	tty         *os.File
	out, errOut io.Writer
	restore     func() // leaves raw mode for the terminal as Run found it
}

// give gives the terminal to a program and takes it back. Ctrl+C ends that
// program, not the menu.
func (s *screen) give(cmd *exec.Cmd) error {
	s.restore()
	fmt.Fprint(s.out, "\x1b[?25h\x1b[H\x1b[2J")
	signal.Ignore(syscall.SIGINT)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.tty, s.out, s.errOut
	err := cmd.Run()
	signal.Reset(syscall.SIGINT)
	fmt.Fprint(s.out, "\x1b[?25l")
	rawMode(s.tty) // restore still brings back the terminal as Run found it
	return err
}

// pause shows line below what a program left on the screen and waits for a
// key.
func (s *screen) pause(line string) {
	fmt.Fprint(s.out, "\r\n"+line)
	for {
		k, err := readInput(s.tty, time.Hour)
		if err != nil || k != "" {
			return
		}
	}
}

// SplitKeys cuts what one read returned into keys: an escape sequence
// (ESC [ x, ESC O x, with parameters) is one key, a lone ESC is Esc, any
// other byte is a key of its own.
func SplitKeys(in string) []string {
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

// readInput waits up to timeout for keys ("" if none came). Reading only
// here, never in the background, leaves the terminal's input to the pager
// or follow that give hands it to.
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

// rawMode switches the terminal to byte-at-a-time input without echo or
// signal keys (Ctrl+C arrives as a key) and returns how to restore it.
// Output processing is off too: the menu ends its lines with \r\n itself.
func rawMode(tty *os.File) (func(), error) {
	fd := int(tty.Fd())
	old, err := term.MakeRaw(fd)
	if err != nil {
		return nil, fmt.Errorf("terminal: %w", err)
	}
	return func() { term.Restore(fd, old) }, nil
}
