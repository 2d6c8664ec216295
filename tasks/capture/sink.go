package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/render"
)

// captureIdleFlush is how often a quiet capture wakes: to retry a spool,
// and to notice stop.
const captureIdleFlush = time.Second

// captureChunk bounds one read: the capture's input memory, whatever the
// volume.
const captureChunk = 32 << 10

// captureDrain is how long the pipe must be quiet before queued lines are
// written out.
const captureDrain = 2 * time.Millisecond

// captureBusy is how much output makes a task a busy one, worth more than
// one P to capture.
const captureBusy = 1 << 20

// captureGather is how long the copier lets a pipe fill after a read that
// found little in it. tmux writes a pane's pipe a piece at a time, as it
// reads the pane; a copier that woke for every piece woke tens of thousands
// of times a second under a fast stream, each wake-up taking the CPU from
// tmux or the command. With the pipe read directly (no cat in between,
// which wakes for every piece whatever the copier does), bench/capture.sh
// went from 1.22x the baseline's time to 1.11x for a \r progress bar. A
// quiet task's output is late by this much at most, well within
// captureDrain's batching.
const captureGather = time.Millisecond

// captureSink is the writing half of a capture: the screen model that turns
// the pane's raw bytes into the text the pane shows, over a spool (write
// errors are transient) over the task's capped output file. Rows that
// scroll off the screen are appended as final lines; the screen's rows are
// the file's tail, rewritten as they change. The wrapper (reading its FIFO)
// and `qtask _capture` (reading its stdin) feed it the same way, through
// copyFrom.
type captureSink struct {
	out    *capped.File
	spool  *spool
	screen *render.Screen
	marker markerScan
	buf    []byte
	live   []byte // the tail last written; nil: rewrite it
	next   []byte // the tail being built
	// settled is how much of live is settled lines (see render.AppendLive).
	settled int
	sawEnd  bool
	busy    bool         // captureBusy bytes have arrived
	read    atomic.Int64 // raw bytes consumed: the wrapper's sign of progress
	// lastRead is when the last byte arrived: where a gap starts.
	lastRead time.Time
	// losses says what output is not in the file; onLoss, if set, is told
	// all of it at each new loss.
	losses []string
	onLoss func(losses string)
	// size, if set, reads the pane's size (0×0: unknown) before each
	// read, so that output after a resize is drawn at the new size.
	size func() (width, height int)
	// display, if set, gets the raw bytes as they arrive (see Display).
	display *displayOut
	// raw, if set, keeps them (see rawCopy).
	raw *rawCopy
}

// File is the task's output file and what writing it needs to know of
// the task: the store fills it from the task's record, so that this
// package never reads or writes a record itself.
type File struct {
	// ID names the task in what a display says to its caller.
	ID string
	// Path is the output file; MaxBytes bounds it (0: capped's default).
	Path     string
	MaxBytes int64
	// EndMarker is the OSC payload the wrapper prints once the command
	// has ended; "" for none.
	EndMarker string
	// Command names the program in the note that stands for a
	// full-screen program's screens.
	Command string
	// KeepFullScreen keeps a full-screen program's last screen.
	KeepFullScreen bool
	// KeepRaw keeps the pane's raw bytes too (RawPath).
	KeepRaw bool
	// OnLoss, if set, is told all output lost so far ("; "-joined) at
	// each new loss, so that the record says so while the task runs.
	OnLoss func(losses string)
}

// openSink opens the task's output file for capturing a pane of the given
// size (0×0: unknown, taken for 80×24).
func openSink(f File, width, height int) (*captureSink, error) {
	limit := f.MaxBytes
	if limit <= 0 {
		limit = capped.DefaultMaxBytes
	}
	out, err := capped.Open(f.Path, limit)
	if err != nil {
		return nil, err
	}
	k := &captureSink{out: out, buf: make([]byte, captureChunk), marker: newMarkerScan(f.EndMarker), onLoss: f.OnLoss}
	k.raw = openRawCopy(f, limit)
	k.spool = newSpool(out, k.lose)
	k.screen = render.New(k.spool, render.Options{Width: width, Height: height, Program: programName(f.Command), KeepLastScreen: f.KeepFullScreen})
	return k, nil
}

// programName is the command's program, for the note that stands for a
// full-screen program's screens.
func programName(command string) string {
	f := strings.Fields(command)
	if len(f) == 0 {
		return ""
	}
	return filepath.Base(f[0])
}

// write feeds raw pane bytes to the screen, watching for the end marker.
func (k *captureSink) write(p []byte) {
	for len(p) > 0 {
		n, found := k.marker.scan(p)
		k.screen.Write(p[:n]) // cannot fail: a spool takes every write
		p = p[n:]
		if found {
			k.sawEnd = true
		}
	}
}

// lose records that some output is not in the file.
func (k *captureSink) lose(what string) {
	k.losses = append(k.losses, what)
	if k.onLoss != nil {
		k.onLoss(strings.Join(k.losses, "; "))
	}
}

// copyFrom renders what arrives on in into the output file until the end
// marker has passed (it reports true, the file up to date), in ends or
// fails (false, with in's error; io.EOF for a plain end), or stop is closed
// (false, nil: noticed within captureIdleFlush).
//
// tmux writes the pipe in small pieces. Reading happens on one goroutine,
// which lets the pipe gather after a small read (captureGather), and the
// file is written in large batches: whenever the pipe has been quiet for
// captureDrain (so `qtask logs` lags by no more than that), or a batch is
// full.
func (k *captureSink) copyFrom(in *os.File, stop <-chan struct{}) (bool, error) {
	fd := int(in.Fd()) // blocking mode: reads wait in poll(2), not the runtime's poller
	held := false      // output not yet in the file
	for !k.sawEnd {
		select {
		case <-stop:
			k.flush()
			return false, nil
		default:
		}
		wait := captureIdleFlush
		if held {
			wait = captureDrain
		}
		if due := k.spool.due(); !due.IsZero() {
			wait = min(wait, max(time.Until(due), 0))
		}
		n, err := readWithin(fd, k.buf, wait)
		if n > 0 {
			k.consume(k.buf[:n])
			held = true
			if n < len(k.buf)/2 {
				time.Sleep(captureGather)
			}
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if held {
				k.flush()
			}
			k.spool.retry()
			held = false
		case err != nil:
			k.flush()
			return false, err
		}
	}
	k.flush()
	return true, nil
}

// consume takes a read's raw bytes: to the display, through the screen
// (at the pane's current size) and into the file.
func (k *captureSink) consume(p []byte) {
	if k.size != nil {
		// One ioctl a read: cheap, and as close to the bytes as an
		// outsider gets to tmux's own resize of the pane.
		if w, h := k.size(); w > 0 && h > 0 {
			k.screen.Resize(w, h)
		}
	}
	if k.read.Add(int64(len(p))) >= captureBusy && !k.busy {
		// A wrapper starts on one P to stay small while its task is
		// quiet (see wrapperGOMAXPROCS); a task that streams output gets
		// the machine's CPUs back.
		k.busy = true
		runtime.GOMAXPROCS(runtime.NumCPU())
	}
	k.lastRead = time.Now()
	k.display.write(p)
	k.raw.write(p)
	k.write(p)
}

// readWithin reads what fd has, waiting at most wait for it to have
// something (os.ErrDeadlineExceeded if it had nothing); io.EOF at its end.
// tmux writes a pane's pipe in small pieces, one read each: poll(2) and
// read(2) cost two system calls a piece, where the runtime's poller took
// about six (epoll, futex wake-ups of other threads, their naps).
func readWithin(fd int, buf []byte, wait time.Duration) (int, error) {
	ms := int(wait.Milliseconds())
	if wait > 0 && ms == 0 {
		ms = 1
	}
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		ready, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if ready == 0 {
			return 0, os.ErrDeadlineExceeded
		}
		n, err := unix.Read(fd, buf)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// flush writes the final lines the screen holds, then, unless earlier
// output is still waiting in the spool, the screen's rows as the file's
// tail if they changed.
func (k *captureSink) flush() {
	k.screen.Flush()
	if !k.spool.flowing() {
		k.live = nil // rewrite the tail once the file takes writes again
		return
	}
	next, settled := k.screen.AppendLive(k.next[:0])
	k.next = next
	if k.live != nil && bytes.Equal(next, k.live) && settled == k.settled {
		return
	}
	k.settled = settled
	if k.out.SetTail(next, settled) != nil {
		k.live = nil
		return
	}
	k.live, k.next = k.next, k.live
	if k.live == nil {
		k.live = []byte{} // an empty tail is written
	}
}

// lastReadText is when output last arrived, for messages.
func (k *captureSink) lastReadText() string {
	if k.lastRead.IsZero() {
		return "the start"
	}
	return k.lastRead.Local().Format(gapTimeFormat)
}

// note writes a line of qtask's own into the output, on a line of its own
// at the point the stream has reached.
func (k *captureSink) note(text string) {
	k.screen.Note(text)
	k.flush()
}

// close ends the stream and closes the file. lost, if set, is output
// missing at the end: it is recorded, and said in a last line of the
// file's, after everything. Output the file would not take is retried
// until drainUntil (blocked is told why meanwhile, nil at the end); what
// is still waiting then is lost.
func (k *captureSink) close(lost string, drainUntil time.Time, blocked func(error)) error {
	k.display.close()
	k.raw.close()
	k.screen.Close() // the tail becomes final lines, written over it
	if lost != "" {
		k.spool.Write([]byte("[qtask: " + lost + "]\n"))
		k.lose(lost)
	}
	if loss := k.spool.drain(drainUntil, blocked); loss != "" {
		k.lose(loss)
	}
	return k.out.Close()
}

// Adopted is the capture of an adopted pane: `qtask _capture ID`, the far
// end of the pane's pipe-pane. The store opens it once the pane's
// scrollback is in the file, and acknowledges the output when Copy returns.
type Adopted struct {
	sink *captureSink
}

// OpenAdopted opens the output file for the adopted pane whose terminal is
// tty (its size is the pane's; nil: unknown). loadSeed gives the screen
// the pane showed when its pipe was attached (false: none), so that the
// program's redraws of it apply to it rather than start over below it; a
// seed that could not be read is a loss.
func OpenAdopted(f File, tty *os.File, loadSeed func() (Seed, bool, error)) (*Adopted, error) {
	seed, seeded, seedErr := loadSeed()
	width, height := paneSize(tty)
	sink, err := openSink(f, width, height)
	if err != nil {
		return nil, err
	}
	sink.size = func() (int, int) { return paneSize(tty) }
	if seedErr != nil {
		sink.lose(seedErr.Error())
	}
	if seeded {
		sink.screen.Seed(seed.Rows, seed.Hidden, seed.CursorX, seed.CursorY, seed.Alternate)
	}
	return &Adopted{sink: sink}, nil
}

// Copy cleans the raw terminal stream in into the output file until it
// sees the end marker or in ends, then closes the file; output the file
// would not take is retried until drainUntil. An input that ends before
// the marker is no proof that everything came through (see
// paneClosedLoss): the output is then said to be incomplete, in a loss and
// at the end of the file. It returns the error of writing the file.
func (a *Adopted) Copy(in *os.File, drainUntil time.Time) error {
	lost := ""
	if end, _ := a.sink.copyFrom(in, nil); !end {
		lost = "the pane's pipe ended before its output was all read; lines may be missing"
	}
	return a.sink.close(lost, drainUntil, nil)
}
