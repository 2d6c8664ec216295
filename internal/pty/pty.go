// Package pty opens pseudo-terminals, for the tests and benchmarks that
// attach a real tmux client and type into it as a person would.
package pty

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Open opens a pseudo-terminal pair of rows×cols: master is the side the
// caller reads what is drawn from and types into, tty the terminal to give
// a program.
func Open(rows, cols uint16) (master, tty *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	fd := int(master.Fd())
	fail := func(what string, err error) (*os.File, *os.File, error) {
		master.Close()
		if tty != nil {
			tty.Close()
		}
		return nil, nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		return fail("unlock pty", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		return fail("pty number", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return fail("open pty tty", err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols}); err != nil {
		return fail("size pty", err)
	}
	return master, tty, nil
}
