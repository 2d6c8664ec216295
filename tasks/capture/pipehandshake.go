package capture

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// pipeHandshake is one attach of a pane's pipe: the shell tmux runs for it
// reports its pid through report and then waits on hold, whose write end
// only this process has. Writing a line to hold lets the shell go on, as a
// cat into report or as the handover helper (goOn); closing hold (or this
// process exiting) ends its wait at EOF and the shell exits, so a wrapper
// that dies never leaves it behind. Both are anonymous pipes the shell
// opens through /proc/PID/fd: no file is created per task.
//
// The shell's ends, reportW and holdR, stay open until the shell has
// reported: it opens them by number, and a number closed early could be
// reused by the time a slow shell comes, by the output file or a record.
// A handshake given up before its shell reported keeps them for the rest
// of the process (two descriptors, no finalizer: plain numbers).
type pipeHandshake struct {
	report, hold   *os.File  // ours: the shell's pid, then a cat's output; the shell's wait
	reportW, holdR int       // the shell's, by number
	line           []byte    // what has arrived of the pid line
	attached       time.Time // when tmux was given it: what the pipe loses, it loses since
}

func newPipeHandshake() (*pipeHandshake, error) {
	var rp, hp [2]int
	if err := unix.Pipe2(rp[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	if err := unix.Pipe2(hp[:], unix.O_CLOEXEC); err != nil {
		unix.Close(rp[0])
		unix.Close(rp[1])
		return nil, err
	}
	return &pipeHandshake{
		report: os.NewFile(uintptr(rp[0]), "output pipe"), reportW: rp[1],
		holdR: hp[0], hold: os.NewFile(uintptr(hp[1]), "output pipe hold"),
	}, nil
}

// command is the pipe's shell command. The shell opens its ends of both
// pipes before it reports, so that ours can be closed once the pid
// arrives: then report ends when the cat does, and hold when we close it.
// A pipe opened through /proc/PID/fd is the same pipe; /proc allows it to
// a process of the same user, whatever Yama's ptrace_scope. The pane's pipe
// moves to pipeFD and hold becomes stdin, because `read` reads stdin only
// and a redirection of a builtin's stdin would park the pipe at a number
// of the shell's choosing. The line it reads says how to go on (goOn): as
// a cat, or as this program's HandoverVerb (/proc/PID/exe: this very
// program, whatever became of its path).
func (h *pipeHandshake) command() string {
	pid := os.Getpid()
	return fmt.Sprintf("exec 3>/proc/%[1]d/fd/%[2]d %[4]d<&0 </proc/%[1]d/fd/%[3]d; echo $$ >&3; read how name && "+
		"case $how in %[5]s) exec /proc/%[1]d/exe %[6]s \"$name\" <&%[4]d 3>&- %[4]d<&-;; *) exec cat <&%[4]d >&3 3>&- %[4]d<&-;; esac",
		pid, h.reportW, h.holdR, pipeFD, goOnHandover, HandoverVerb)
}

// How the handshake's shell goes on (goOn).
const (
	goOnCat      = "cat"
	goOnHandover = "handover"
)

// pipeFD is where the handshake's shell holds the pane's pipe.
const pipeFD = 5

// awaitPID waits at most wait for the shell's pid (os.ErrDeadlineExceeded
// if it has not come whole yet).
func (h *pipeHandshake) awaitPID(wait time.Duration) (int, error) {
	var buf [32]byte
	for {
		if i := bytes.IndexByte(h.line, '\n'); i >= 0 {
			pid, err := strconv.Atoi(string(h.line[:i]))
			if err != nil || pid <= 1 || i+1 != len(h.line) {
				return 0, fmt.Errorf("unexpected %q", h.line)
			}
			return pid, nil
		}
		if len(h.line) > len(buf) {
			return 0, fmt.Errorf("unexpected %q", h.line)
		}
		n, err := readWithin(int(h.report.Fd()), buf[:], wait)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return 0, err
			}
			return 0, fmt.Errorf("%w (after %q)", err, h.line)
		}
		h.line = append(h.line, buf[:n]...)
	}
}

// reported closes our copies of the shell's ends, which it has opened
// before it wrote its pid.
func (h *pipeHandshake) reported() {
	unix.Close(h.reportW)
	unix.Close(h.holdR)
}

// goOn lets the shell go on: as a cat into report (goOnCat), or as the
// handover helper (goOnHandover, with the socket it is to reach).
func (h *pipeHandshake) goOn(how ...string) {
	h.hold.Write([]byte(strings.Join(how, " ") + "\n")) // a shell already gone: the copier attaches anew
	h.hold.Close()
}

// abandon gives the handshake up: a shell still waiting, or yet to come,
// finds hold without a writer (or report without a reader) and exits. The
// shell's ends stay open unless it has reported (see pipeHandshake).
func (h *pipeHandshake) abandon() {
	h.report.Close()
	h.hold.Close()
}
