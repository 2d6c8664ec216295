package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tmux"
)

// The wrapper's patience with its capture once the end marker is printed.
// It waits as long as output keeps arriving. After captureStall without a
// byte it looks at what it reads: the pane's pipe itself, or a cat still
// running, is live and gets until captureSilence; a cat that is stopped
// (SIGSTOP, a debugger) or gone, or a pipe whose shell never reported, is
// replaced at once. A replaced capture gets the marker again; after
// captureRestarts replacements the wrapper gives up and says so.
const (
	captureCheck    = 250 * time.Millisecond
	captureStall    = 2 * time.Second
	captureSilence  = 30 * time.Second
	captureRestarts = 2
	// captureClosedWait bounds the wait for the pipe's end after the pane
	// itself was closed (tmux closes the pipe with it).
	captureClosedWait = 2 * time.Second
	// captureTmuxTimeout bounds one tmux call of the capture's.
	captureTmuxTimeout = 10 * time.Second
)

// captureVar, in the caller's environment, picks how the wrapper gets its
// pane's pipe: "handover" skips pidfd_getfd(2) and has a helper pass the
// pipe (what a machine that refuses it gets), "cat" keeps a cat between
// tmux and the wrapper. Both are for diagnosis: a kernel that misbehaves,
// a capture to watch as a process of its own.
const captureVar = "QTASK_CAPTURE"

// Mode is how the wrapper gets its pane's pipe (captureVar); the zero
// Mode is the usual way.
type Mode int

const (
	captureTake     Mode = iota // pidfd_getfd, else a handover helper, else a cat
	captureHandover             // a handover helper, else a cat
	captureCat                  // a cat
)

// ModeOf reads captureVar from env, the caller's environment.
func ModeOf(env []string) Mode {
	switch {
	case slices.Contains(env, captureVar+"=cat"):
		return captureCat
	case slices.Contains(env, captureVar+"=handover"):
		return captureHandover
	}
	return captureTake
}

// gapTimeFormat is how the times of a gap read in the output file.
const gapTimeFormat = "15:04:05.000"

// Pane is the wrapper's in-process capture. tmux runs a pane's pipe
// as `sh -c COMMAND` with the pipe, a socket, on the shell's stdin. The
// command is a handshake (pipeHandshake): the shell reports its pid through
// a pipe of the wrapper's and waits; the wrapper takes the socket out of the
// shell with pidfd_getfd(2), lets the shell exit and reads the pane itself,
// so no process sits between tmux and the output file and none is started
// per task beyond the shell. Where the kernel refuses (Yama's ptrace_scope
// 1 or more for a user without CAP_SYS_PTRACE, a seccomp filter, Linux
// before 5.6), the shell becomes a helper that passes the pipe over a unix
// socket and exits (pipehandover.go); failing that, or where captureVar
// says so, it becomes a cat writing into the wrapper's pipe, which stays
// between tmux and the wrapper. If the pipe ends before the
// end marker passed (tmux closed it, the cat was killed) or stalls, the
// wrapper attaches a fresh one and marks the gap in the file and the record:
// output may be lost, never silently.
type Pane struct {
	server Panes
	pane   tmux.PaneID
	tty    io.Writer // the pane: the end marker is printed here
	alive  func(pid int) bool
	marker string
	sink   *captureSink
	mode   Mode
	// handoverFailed: a handover helper did not deliver; later attaches
	// use a cat. The copier's alone.
	handoverFailed bool

	stop     chan struct{} // closed to end the copier
	done     chan struct{} // closed when the copier has ended
	stopOnce sync.Once
	ending   atomic.Bool // the end marker is out: print it again after a restart
	// reattach asks the copier, waiting for a shell that never reported,
	// to attach a fresh pipe.
	reattach atomic.Bool

	mu      sync.Mutex
	gap     *captureGap // a loss not yet marked in the file
	failed  error       // why the copier ended without the marker
	source  pipeSource  // what the copier reads now
	stalled bool        // restart shut source's pipe down
}

// pipeSource is what the copier reads: the pane's pipe itself (sock),
// taken from its shell, or the pipe a cat copies it into; while a handover
// helper passes the pipe over, the helper. Zero while a shell has not
// reported yet.
type pipeSource struct {
	sock *os.File
	// pid is the cat or the handover helper, the process that holds the
	// pipe; pidfd is its pidfd (nil if it could not be had): a pid the
	// process left behind may be another's by now, a pidfd is its own.
	pid   int
	pidfd *os.File
}

// captureGap is output that could not be captured: from when the last
// byte arrived until a fresh pipe was attached.
type captureGap struct {
	from, to time.Time
	why      string
}

func (g *captureGap) String() string {
	return fmt.Sprintf("output between %s and %s lost: %s",
		g.from.Local().Format(gapTimeFormat), g.to.Local().Format(gapTimeFormat), g.why)
}

// Panes is the one tmux operation the capture needs: pointing a pane's
// pipe at a shell command, replacing any pipe it has. The store passes its
// tmux server (or a test's fake).
type Panes interface {
	PipeToCommand(ctx context.Context, pane tmux.PaneID, command string) error
}

// PaneOptions says which pane a wrapper captures and how.
type PaneOptions struct {
	Server Panes
	Pane   tmux.PaneID
	// TTY is the pane's terminal, the wrapper's stdout: the end marker is
	// printed there, and its size is the pane's.
	TTY *os.File
	// Display is the FIFO of a foreground caller that shows the pane's
	// raw bytes ("" for none); it is used only if it is one of
	// DisplayDir's (see NewDisplay).
	Display, DisplayDir string
	// Mode is how the pipe is had (ModeOf).
	Mode Mode
	// Alive says whether process pid is there and neither stopped nor
	// dead: a cat or a handover helper that is not is replaced at once
	// (the store reads /proc for it).
	Alive func(pid int) bool
}

// Start opens the task's output file and attaches the pane's pipe, both
// before the command can print a byte. The caller must Finish it.
func Start(f File, o PaneOptions) (*Pane, error) {
	display := openDisplayOut(o.DisplayDir, o.Display, f)
	width, height := paneSize(o.TTY)
	sink, err := openSink(f, width, height)
	if err != nil {
		display.close()
		return nil, err
	}
	sink.display = display
	sink.size = func() (int, int) { return paneSize(o.TTY) }
	c := &Pane{
		server: o.Server, pane: o.Pane, tty: o.TTY, alive: o.Alive,
		marker: f.EndMarker, sink: sink, mode: o.Mode, stop: make(chan struct{}), done: make(chan struct{}),
	}
	h, err := c.attach()
	if err != nil {
		sink.close("", time.Now(), nil)
		return nil, err
	}
	go c.run(h)
	return c, nil
}

// paneSize is the size of the terminal tty, a task's pane; 0×0 if it
// cannot be read. tmux sets it whenever it resizes the pane.
func paneSize(tty *os.File) (width, height int) {
	if tty == nil {
		return 0, 0
	}
	ws, err := unix.IoctlGetWinsize(int(tty.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0
	}
	return int(ws.Col), int(ws.Row)
}

// attach points the pane's pipe at a fresh handshake, replacing any pipe
// the pane has.
func (c *Pane) attach() (*pipeHandshake, error) {
	h, err := newPipeHandshake()
	if err != nil {
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), captureTmuxTimeout)
	defer cancel()
	h.attached = time.Now()
	if err := c.server.PipeToCommand(ctx, c.pane, h.command()); err != nil {
		h.abandon()
		return nil, err
	}
	return h, nil
}

// run is the copier: it reads each pipe in turn until the end marker
// passes.
func (c *Pane) run(h *pipeHandshake) {
	defer close(c.done)
	for {
		in, err := c.connect(h)
		if err != nil {
			c.fail(err)
			return
		}
		if in == nil {
			return // stopped
		}
		c.markGap()
		end, _ := c.sink.copyFrom(in, c.stop)
		why := c.release(in)
		if end || c.stopped() {
			return
		}
		// The pipe ended and the marker has not passed: tmux closed it
		// (the pane is gone, or someone replaced the pipe), or its cat
		// was killed.
		from := c.sink.lastRead
		if from.IsZero() {
			from = time.Now()
		}
		if h, err = c.replace(from, why); err != nil {
			c.fail(err)
			return
		}
	}
}

// connect waits for the shell of h to report and returns what to read: the
// pane's pipe, or the pipe its cat writes into; nil once the copier is
// stopped. A shell that never reports is replaced when awaitMarker asks, a
// pipe that could not be had at once.
func (c *Pane) connect(h *pipeHandshake) (*os.File, error) {
	for {
		pid, err := h.awaitPID(captureCheck)
		why := ""
		switch {
		case err == nil:
			var in *os.File
			if in, why = c.takeOrCat(h, pid); in != nil {
				return in, nil
			}
			if c.stopped() {
				return nil, nil
			}
		case !errors.Is(err, os.ErrDeadlineExceeded):
			h.abandon()
			return nil, fmt.Errorf("read the output pipe's handshake: %w", err)
		case c.stopped():
			h.abandon()
			return nil, nil
		case c.reattach.Swap(false):
			h.abandon()
			why = "the capture process never started"
		default:
			continue
		}
		// What tmux wrote into that pipe is lost: since the last byte
		// read, or since the pipe was attached.
		from := c.sink.lastRead
		if from.IsZero() {
			from = h.attached
		}
		if h, err = c.replace(from, why); err != nil {
			return nil, err
		}
	}
}

// takeOrCat gets the pane's pipe from the shell pid of h: duplicated out of
// it, or passed over by the handover helper the shell becomes; or, where
// neither may be, it lets the shell go on as a cat into h's report pipe.
// Either way the shell no longer waits. A shell gone, or a helper that did
// not deliver, leaves nothing to read (nil, and why): tmux's pipe ended
// with it.
func (c *Pane) takeOrCat(h *pipeHandshake, pid int) (*os.File, string) {
	h.reported()
	if c.mode == captureTake {
		sock, err := takePipe(pid)
		switch {
		case err == nil:
			h.abandon() // the shell's wait ends at EOF: it exits
			c.setSource(pipeSource{sock: sock})
			return sock, ""
		case errors.Is(err, unix.ESRCH):
			h.abandon()
			return nil, "the capture process exited"
		}
	}
	if c.mode != captureCat && !c.handoverFailed {
		if l, err := listenHandover(); err == nil {
			sock, err := c.handOver(h, pid, l)
			if err == nil {
				c.setSource(pipeSource{sock: sock})
				return sock, ""
			}
			c.handoverFailed = true
			return nil, "the capture's handover failed: " + err.Error()
		}
	}
	h.goOn(goOnCat)
	c.setSource(pipeSource{pid: pid, pidfd: pidfdOf(pid)})
	return h.report, ""
}

// pidfdOf is a pidfd of process pid, nil if none can be had. It needs no
// ptrace rights.
func pidfdOf(pid int) *os.File {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), "pidfd")
}

// handOver has the shell pid of h become the handover helper and takes
// the pipe it passes through l. Meanwhile the helper counts as live (see
// live): it is what holds the pipe.
func (c *Pane) handOver(h *pipeHandshake, pid int, l *handoverListener) (*os.File, error) {
	defer l.close()
	helper := pidfdOf(pid) // readable once it exits
	if helper == nil {
		h.abandon()
		return nil, fmt.Errorf("the pipe's shell (pid %d) is gone", pid)
	}
	defer helper.Close()
	c.setSource(pipeSource{pid: pid, pidfd: helper})
	defer c.setSource(pipeSource{}) // before helper closes: restart never signals a closed pidfd
	h.goOn(goOnHandover, l.name)
	h.report.Close() // the helper writes nothing there
	return l.receive(pid, int(helper.Fd()), handoverWait, c.stop)
}

// takePipe duplicates descriptor pipeFD of process pid, the shell tmux runs
// for a pane's pipe: the socket tmux writes the pane's output into. One
// that is not a socket is not a pane's pipe and is not taken.
func takePipe(pid int) (*os.File, error) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(pidfd)
	fd, err := unix.PidfdGetfd(pidfd, pipeFD, 0) // close-on-exec, as every fd of ours
	if err != nil {
		return nil, err
	}
	return socketFile(fd)
}

func (c *Pane) setSource(src pipeSource) {
	c.mu.Lock()
	c.source = src
	c.mu.Unlock()
}

// release closes what the copier read and says why it ended, for the gap.
func (c *Pane) release(in *os.File) string {
	c.mu.Lock()
	src, stalled := c.source, c.stalled
	c.source, c.stalled = pipeSource{}, false
	in.Close() // under mu: restart never shuts a descriptor number down after it was reused
	if src.pidfd != nil {
		src.pidfd.Close()
	}
	c.mu.Unlock()
	switch {
	case stalled:
		return "the pane's pipe stalled"
	case src.sock != nil:
		return "tmux closed the pane's pipe"
	}
	return "the capture process exited"
}

// replace attaches a fresh pipe and remembers the gap since from, to be
// marked in the file once the new pipe is read. If the end marker was
// already printed, it is printed again for the new pipe to carry.
func (c *Pane) replace(from time.Time, why string) (*pipeHandshake, error) {
	h, err := c.attach()
	if err != nil {
		return nil, fmt.Errorf("re-attach the output pipe: %w", err)
	}
	c.reattach.Store(false) // a request for the handshake given up
	c.mu.Lock()
	if c.gap == nil {
		c.gap = &captureGap{from: from, why: why}
	}
	c.gap.to = time.Now()
	c.mu.Unlock()
	if c.ending.Load() {
		c.printMarker()
	}
	return h, nil
}

// markGap writes the pending gap, if any, into the file and the record.
// Only the copier calls it: the sink is its own.
func (c *Pane) markGap() {
	c.mu.Lock()
	g := c.gap
	c.gap = nil
	c.mu.Unlock()
	if g != nil {
		c.sink.note("[qtask: " + g.String() + "]")
		c.sink.lose(g.String())
	}
}

func (c *Pane) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed == nil {
		c.failed = err
	}
}

func (c *Pane) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// printMarker prints the end marker into the pane. OSC: terminals and tmux
// ignore an unknown one; the copier does not.
func (c *Pane) printMarker() {
	fmt.Fprintf(c.tty, "\x1b]%s\a", c.marker)
}

// paneClosedLoss is what a task whose pane was closed before the capture
// passed the end marker has lost, as far as anyone can tell. The end of
// the pane's pipe is no proof that everything came through: tmux 3.3a
// destroys a killed pane (kill-pane, kill-window, kill-server) at once,
// dropping what it had read from the pane but not yet written into the
// pipe, and a SIGKILLed server drops it too. Only the end marker, which
// the pane's terminal delivers after everything printed before it, proves
// the output whole.
const paneClosedLoss = "the pane was closed before its output was all read; lines may be missing"

// Finish waits until everything the command printed is in the output file,
// closes it, and returns what was lost ("" when nothing was). paneClosed
// says the pane is gone: then no marker can be printed, the capture reads
// what the pipe still holds, and the output is complete only if the marker
// had already passed (see paneClosedLoss). Output the file will not take
// is retried until until; meanwhile blocked is told why. Output lost at
// the end is said at the end of the file too.
func (c *Pane) Finish(paneClosed bool, until time.Time, blocked func(error)) string {
	if paneClosed {
		select {
		case <-c.done:
		case <-time.After(captureClosedWait):
		}
	} else if !c.awaitMarker() {
		c.fail(fmt.Errorf("the capture did not pass the end marker after %d restarts", captureRestarts))
	}
	c.halt()
	c.mu.Lock()
	gap, failed := c.gap, c.failed
	c.mu.Unlock()
	if gap != nil {
		c.sink.lose(gap.String())
	}
	lost := ""
	switch {
	case c.sink.sawEnd:
	case paneClosed:
		lost = paneClosedLoss
	default:
		why := "the capture stopped"
		if failed != nil {
			why = failed.Error()
		}
		lost = "output after " + c.sink.lastReadText() + " may be missing: " + why
	}
	if err := c.sink.close(lost, until, blocked); err != nil {
		c.sink.lose(err.Error())
	}
	return strings.Join(c.sink.losses, "; ")
}

// awaitMarker prints the end marker and waits for the copier to pass it, as
// long as the capture makes progress; see captureStall.
func (c *Pane) awaitMarker() bool {
	c.ending.Store(true)
	c.printMarker()
	tick := time.NewTicker(captureCheck)
	defer tick.Stop()
	seen, seenAt := c.sink.read.Load(), time.Now()
	for restarts := 0; ; {
		select {
		case <-c.done:
			return c.sink.sawEnd
		case <-tick.C:
		}
		if n := c.sink.read.Load(); n != seen {
			seen, seenAt = n, time.Now()
			continue
		}
		quiet := time.Since(seenAt)
		if quiet < captureStall {
			continue
		}
		if c.live() && quiet < captureSilence {
			continue // merely slow
		}
		if restarts == captureRestarts {
			return false
		}
		restarts++
		seenAt = time.Now()
		c.restart()
	}
}

// live says whether what the copier reads may still deliver: the pane's
// pipe itself, or a cat that runs (not stopped, not gone).
func (c *Pane) live() bool {
	c.mu.Lock()
	src := c.source
	c.mu.Unlock()
	switch {
	case src.sock != nil:
		return true
	case src.pid != 0:
		return c.running(src.pid, src.pidfd)
	}
	return false
}

// running says whether process pid (pidfd: its pidfd, if any) is there and
// neither stopped nor dead.
func (c *Pane) running(pid int, pidfd *os.File) bool {
	if pidfd != nil {
		fds := []unix.PollFd{{Fd: int32(pidfd.Fd()), Events: unix.POLLIN}}
		if n, err := unix.Poll(fds, 0); err != nil || n > 0 {
			return false // exited: the pid may be another's now
		}
	}
	return c.alive(pid)
}

// restart replaces what the copier reads: the pipe it holds is shut down
// and a cat or a handover helper killed, so that the copier sees the end
// and attaches the next one; a shell that never reported is replaced by
// the copier itself.
func (c *Pane) restart() {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch src := c.source; {
	case src.sock != nil:
		c.stalled = true
		unix.Shutdown(int(src.sock.Fd()), unix.SHUT_RDWR)
	case src.pidfd != nil:
		// A cat's end ends its pipe; a helper's ends the wait for its pipe.
		unix.PidfdSendSignal(int(src.pidfd.Fd()), unix.SIGKILL, nil, 0)
	case src.pid != 0:
		syscall.Kill(src.pid, syscall.SIGKILL) // no pidfd (Linux before 5.3): by pid, as before
	default:
		c.reattach.Store(true)
	}
}

// halt ends the copier and waits for it: it notices within
// captureIdleFlush, or, amid replacing its pipe, once the tmux call is
// done (captureTmuxTimeout at most).
func (c *Pane) halt() {
	c.stopOnce.Do(func() { close(c.stop) })
	<-c.done
}
