package tasks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
// byte it looks at the pipe's cat: one that is stopped (SIGSTOP, a
// debugger) or gone is replaced at once; a live one gets until
// captureSilence. A replaced capture gets the marker again; after
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

// gapTimeFormat is how the times of a gap read in the output file.
const gapTimeFormat = "15:04:05.000"

// paneCapture is the wrapper's in-process capture. tmux pipes the pane into
// `cat`, which writes a FIFO beside the record; the wrapper reads the FIFO
// into the output file itself, so a task costs one Go process, not two. If
// the cat dies or stalls, the wrapper attaches a fresh one and marks the gap
// in the file and the record: output may be lost, never silently.
type paneCapture struct {
	s      *Store
	id     string
	server Panes
	pane   tmux.PaneID
	fifo   string
	tty    io.Writer // the pane: the end marker is printed here
	marker string
	sink   *captureSink

	stop     chan struct{} // closed to end the copier
	done     chan struct{} // closed when the copier has ended
	stopOnce sync.Once
	ending   atomic.Bool // the end marker is out: print it again after a restart

	mu     sync.Mutex
	gap    *captureGap // a loss not yet marked in the file
	failed error       // why the copier ended without the marker
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

// startCapture makes the task's FIFO, opens its output file and attaches the
// pane's pipe, all before the command can print a byte. The pane's raw
// bytes also go to display, if any.
func (s *Store) startCapture(r *record, opts ExecOptions, display *displayOut) (*paneCapture, error) {
	fifo := s.pipePath(r.ID)
	os.Remove(fifo) // a leftover of a start that died; Remove never follows a symlink
	if err := unix.Mkfifo(fifo, fileMode); err != nil {
		return nil, fmt.Errorf("create output pipe: %w", err)
	}
	width, height := paneSize(opts.Out)
	sink, err := openSink(r, width, height)
	if err != nil {
		os.Remove(fifo)
		display.close()
		return nil, err
	}
	sink.display = display
	// Best effort: the settle records the losses in any case.
	sink.onLoss = func(loss string) { s.noteLoss(r.ID, loss) }
	sink.size = func() (int, int) { return paneSize(opts.Out) }
	c := &paneCapture{
		s: s, id: r.ID, server: s.panes(opts.Server), pane: opts.Pane, fifo: fifo, tty: opts.Out,
		marker: r.EndMarker, sink: sink, stop: make(chan struct{}), done: make(chan struct{}),
	}
	if err := c.attach(); err != nil {
		sink.close(time.Now(), nil)
		os.Remove(fifo)
		return nil, err
	}
	go c.run()
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

// attach points the pane's pipe at the FIFO, replacing any pipe it has.
func (c *paneCapture) attach() error {
	ctx, cancel := context.WithTimeout(context.Background(), captureTmuxTimeout)
	defer cancel()
	return c.server.PipeToFile(ctx, c.pane, c.fifo)
}

// run is the copier: it reads each cat in turn until the end marker passes.
func (c *paneCapture) run() {
	defer close(c.done)
	for {
		// Opening a FIFO for reading waits for its writer: the cat.
		f, err := os.OpenFile(c.fifo, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			c.fail(fmt.Errorf("open output pipe: %w", err))
			return
		}
		c.markGap()
		end, err := c.sink.copyFrom(f, c.stop)
		f.Close()
		if end || c.stopped() {
			return
		}
		// The cat is gone and the marker has not passed: it was killed, or
		// tmux closed the pipe because the pane is gone.
		from := c.sink.lastRead
		if from.IsZero() {
			from = time.Now()
		}
		if err := c.replace(from, "the capture process exited"); err != nil {
			c.fail(err)
			return
		}
	}
}

// replace attaches a fresh pipe and remembers the gap since from, to be
// marked in the file once the new cat is read. If the end marker was
// already printed, it is printed again for the new cat to carry.
func (c *paneCapture) replace(from time.Time, why string) error {
	if err := c.attach(); err != nil {
		return fmt.Errorf("re-attach the output pipe: %w", err)
	}
	c.mu.Lock()
	if c.gap == nil {
		c.gap = &captureGap{from: from, why: why}
	}
	c.gap.to = time.Now()
	c.mu.Unlock()
	if c.ending.Load() {
		c.printMarker()
	}
	return nil
}

// markGap writes the pending gap, if any, into the file and the record.
// Only the copier calls it: the sink is its own.
func (c *paneCapture) markGap() {
	c.mu.Lock()
	g := c.gap
	c.gap = nil
	c.mu.Unlock()
	if g != nil {
		c.sink.note("[qtask: " + g.String() + "]")
		c.sink.lose(g.String())
	}
}

func (c *paneCapture) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failed == nil {
		c.failed = err
	}
}

func (c *paneCapture) stopped() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// printMarker prints the end marker into the pane. OSC: terminals and tmux
// ignore an unknown one; the copier does not.
func (c *paneCapture) printMarker() {
	fmt.Fprintf(c.tty, "\x1b]%s\a", c.marker)
}

// finish waits until everything the command printed is in the output file,
// closes it, and returns what was lost ("" when nothing was). paneClosed
// says the pane is gone: then no marker can be printed and the end of the
// pipe is its end. Output the file will not take is retried until until;
// meanwhile blocked is told why.
func (c *paneCapture) finish(paneClosed bool, until time.Time, blocked func(error)) string {
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
	if !c.sink.sawEnd && !paneClosed {
		why := "the capture stopped"
		if failed != nil {
			why = failed.Error()
		}
		c.sink.lose("output after " + c.sink.lastReadText() + " may be missing: " + why)
	}
	if err := c.sink.close(until, blocked); err != nil {
		c.sink.lose(err.Error())
	}
	os.Remove(c.fifo)
	return strings.Join(c.sink.losses, "; ")
}

// awaitMarker prints the end marker and waits for the copier to pass it, as
// long as the capture makes progress; see captureStall.
func (c *paneCapture) awaitMarker() bool {
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
		writers := fifoWriters(c.fifo)
		if len(writers) > 0 && !anyStopped(writers) && quiet < captureSilence {
			continue // a live cat, merely slow
		}
		if restarts == captureRestarts {
			return false
		}
		restarts++
		seenAt = time.Now()
		c.restart(writers)
	}
}

// restart replaces a stalled or missing cat. A cat that exists is killed:
// the copier sees its end and attaches the next one. Without one (it never
// started), the next is attached here.
func (c *paneCapture) restart(writers []int) {
	if len(writers) == 0 {
		if err := c.replace(time.Now(), "the capture process never started"); err != nil {
			c.fail(err)
		}
		return
	}
	for _, pid := range writers {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// halt ends the copier and waits for it. A copier waiting for a writer to
// open the FIFO is released by opening it for writing ourselves. If the
// FIFO's name is gone (its state directory was deleted), nothing can open
// it any more: a copier still waiting on it is left waiting, once
// captureClosedWait has given one reading a live cat time to end, rather
// than keeping the wrapper alive for ever.
func (c *paneCapture) halt() {
	c.stopOnce.Do(func() { close(c.stop) })
	var gone time.Time
	for {
		w, err := os.OpenFile(c.fifo, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
		switch {
		case err == nil:
			w.Close()
		case !errors.Is(err, fs.ErrNotExist):
		case gone.IsZero():
			gone = time.Now()
		case time.Since(gone) >= captureClosedWait:
			return
		}
		select {
		case <-c.done:
			return
		case <-time.After(captureCheck):
		}
	}
}

// fifoWriters lists the processes whose stdout is the FIFO at path: the
// pipe's cat (tmux starts it with `exec cat >FIFO`). It reads /proc, so it
// is for rare checks only.
func fifoWriters(path string) []int {
	want, err := os.Stat(path)
	if err != nil {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if fi, err := os.Stat(filepath.Join("/proc", e.Name(), "fd", "1")); err == nil && os.SameFile(fi, want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// anyStopped reports whether one of pids is stopped (T) or traced (t).
func anyStopped(pids []int) bool {
	for _, pid := range pids {
		if st := processState(pid); st == 'T' || st == 't' {
			return true
		}
	}
	return false
}

// processState is the state letter of /proc/PID/stat (the field after the
// command name, which may hold spaces and parentheses), 0 if unreadable.
func processState(pid int) byte {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 || i+2 >= len(data) {
		return 0
	}
	return data[i+2]
}
