package capture

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A foreground `qtask run` whose stdout is a terminal shows the pane's raw
// bytes, colours and redrawn progress bars included, rather than the clean
// text of the output file: the capture copies each chunk it reads from the
// pane into a FIFO the caller made (its display) before rendering it.
//
// The capture never waits for the caller. It writes the display without
// blocking, and only chunks that fit whole while leaving room for one line
// of its own: a chunk that does not fit (the terminal is slow, or the
// caller is stopped) is dropped from the display, and that line, written
// where the first one was dropped, says so. The output file loses nothing.
// Once the caller is gone (it ended, was promoted, or was killed) the write
// fails with EPIPE and the capture closes its end for good.

// displayPipeSize is the FIFO's capacity asked for (best effort): room for
// a burst of output while the caller's terminal catches up.
const displayPipeSize = 1 << 20

// displaySkipped is the line a display shows where it skips output, for
// task id; shorter than PIPE_BUF, so it is written whole or not at all.
func displaySkipped(id string) []byte {
	return []byte("\x1b[0m\r\n[qtask: output skipped here, this terminal was not keeping up; `qtask logs " + id + "` has all of it]\r\n")
}

// displayRestore undoes what a command cut off mid-way (by a promote or a
// timeout) may have left set on the caller's terminal: a colour, a hidden
// cursor.
const displayRestore = "\x1b[0m\x1b[?25h"

// displayPrefix and displaySuffix frame the name of a display FIFO in the
// tasks directory.
const displayPrefix, displaySuffix = "display-", ".fifo"

// Display is the reading end of a foreground task's raw stream, held by
// the `qtask run` that waits on the task.
type Display struct {
	path string
	f    *os.File
	done chan struct{}
	err  error // of writing out, set by the copier before done
}

// IsDisplayName reports whether name is that of a display FIFO, for the
// prune of those whose caller was killed before it removed its own.
func IsDisplayName(name string) bool {
	return strings.HasPrefix(name, displayPrefix) && strings.HasSuffix(name, displaySuffix)
}

// NewDisplay makes a display FIFO named name in dir, the store's tasks
// directory, and opens it; tasks.StartOptions.Display names it to the task. The
// caller holds it read and write, so its reads wait for bytes instead of
// seeing an end before the capture opens its end.
func NewDisplay(dir, name string) (*Display, error) {
	path := filepath.Join(dir, displayPrefix+name+displaySuffix)
	if err := unix.Mkfifo(path, 0o600); err != nil {
		return nil, fmt.Errorf("create display pipe: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("open display pipe: %w", err)
	}
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.FcntlInt(fd, unix.F_SETPIPE_SZ, displayPipeSize) })
	}
	return &Display{path: path, f: f}, nil
}

// Path is the display's FIFO, for StartOptions.Display.
func (d *Display) Path() string { return d.path }

// Close closes the caller's end and removes the FIFO if the task has not.
// A nil Display is none: nothing to close.
func (d *Display) Close() error {
	if d == nil {
		return nil
	}
	os.Remove(d.path)
	return d.f.Close()
}

// CopyTo copies the raw stream to out, on a goroutine of its own, until
// Stop.
func (d *Display) CopyTo(out io.Writer) {
	d.done = make(chan struct{})
	go func() {
		defer close(d.done)
		buf := make([]byte, captureChunk)
		for {
			n, err := d.f.Read(buf)
			if n > 0 {
				if _, werr := out.Write(buf[:n]); werr != nil {
					d.err = werr
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
}

// Stop ends the copy and writes out what is left in the FIFO: everything
// the capture passed on before the caller looked at the task's record.
// cut says the command runs on: the terminal's settings are restored.
func (d *Display) Stop(out io.Writer, cut bool) error {
	d.f.SetReadDeadline(time.Now())
	<-d.done
	if d.err != nil {
		return d.err
	}
	d.f.SetReadDeadline(time.Time{})
	rc, err := d.f.SyscallConn()
	if err != nil {
		return err
	}
	buf := make([]byte, captureChunk)
	var werr error
	rc.Read(func(fd uintptr) bool {
		for werr == nil {
			n, _ := unix.Read(int(fd), buf)
			if n <= 0 {
				break
			}
			_, werr = out.Write(buf[:n])
		}
		return true
	})
	if werr == nil && cut {
		_, werr = io.WriteString(out, displayRestore)
	}
	return werr
}

// displayOut is the capture's end of a display: a non-blocking file
// descriptor, -1 once closed.
type displayOut struct {
	fd      int
	size    int    // the FIFO's capacity
	note    []byte // displaySkipped
	skipped bool   // the last chunk was dropped, and the note written
	raw     rawFilter
}

// rawFilter passes a pane's raw bytes on as another terminal may be shown
// them (a foreground caller's, or whoever reads `logs --raw`): escapes and
// colours included, qtask's own end marker and the program's questions to
// its terminal left out.
type rawFilter struct {
	// The end marker the wrapper prints into the pane is qtask's own: it
	// is kept out. held is the start of what may be the marker, passed on
	// once it turns out not to be.
	marker    markerScan
	held, buf []byte
	// The program's questions to its terminal were answered by tmux; the
	// terminal shown them must not answer them again (see queryFilter),
	// into whatever reads its input.
	queries queryFilter
	shown   []byte
}

func newRawFilter(endMarker string) rawFilter {
	return rawFilter{marker: newMarkerScan(endMarker)}
}

// pass returns what of p may be shown, in a buffer reused by the next call.
func (f *rawFilter) pass(p []byte) []byte {
	out := append(f.buf[:0], f.held...)
	for len(p) > 0 {
		n, found := f.marker.scan(p)
		out = append(out, p[:n]...)
		if found {
			// out ends with the marker: ESC ] pattern, then BEL or ESC \.
			end := len(f.marker.pat) + 1
			if p[n-1] == '\\' {
				end++
			}
			out = out[:max(0, len(out)-end)]
		}
		p = p[n:]
	}
	keep := 0
	if !f.marker.done {
		keep = f.marker.i
	}
	f.held = append(f.held[:0], out[len(out)-keep:]...)
	f.buf = out
	f.shown = f.queries.filter(f.shown[:0], out[:len(out)-keep])
	return f.shown
}

// openDisplayOut opens the display FIFO at path for writing, without
// waiting, and removes its name: nothing else opens it. It returns nil if
// there is no display, its caller is already gone (ENXIO), or path is not
// in dir, the store's tasks directory.
func openDisplayOut(dir, path string, f File) *displayOut {
	if path == "" || filepath.Dir(path) != dir {
		return nil
	}
	defer os.Remove(path)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	var st unix.Stat_t
	size, err := unix.FcntlInt(uintptr(fd), unix.F_GETPIPE_SZ, 0)
	if err != nil || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		unix.Close(fd)
		return nil
	}
	return &displayOut{fd: fd, size: size, note: displaySkipped(f.ID), raw: newRawFilter(f.EndMarker)}
}

// write passes the raw bytes p on to the caller, without the end marker
// and without the program's terminal queries.
func (d *displayOut) write(p []byte) {
	if d == nil || d.fd < 0 {
		return
	}
	d.send(d.raw.pass(p))
}

// send passes p on to the caller if it fits, else drops it and says so.
func (d *displayOut) send(p []byte) {
	if len(p) == 0 {
		return
	}
	if d.fits(len(p)) && d.put(p) {
		d.skipped = false
		return
	}
	if !d.skipped {
		d.skipped = true
		d.put(d.note) // fits: room for it was left
	}
}

// fits reports whether n more bytes may go into the FIFO, leaving room for
// the note. A pipe holds pages, not bytes: a write that does not fit the
// last page's free space starts a new one, so a page may be little more
// than half full (each two pages hold more than one page's bytes), and the
// partly read page at the head and the last page cost one each.
func (d *displayOut) fits(n int) bool {
	queued, err := unix.IoctlGetInt(d.fd, unix.TIOCINQ) // FIONREAD
	if err != nil || queued == 0 {
		return true // an empty pipe takes a chunk whole
	}
	page := os.Getpagesize()
	return 2*(queued+n)+4*page <= d.size
}

// put writes p, reporting false if any of it did not fit or the caller is
// gone.
func (d *displayOut) put(p []byte) bool {
	for len(p) > 0 && d.fd >= 0 {
		n, err := unix.Write(d.fd, p)
		switch {
		case n > 0:
			p = p[n:]
		case errors.Is(err, unix.EINTR):
		case errors.Is(err, unix.EAGAIN):
			return false
		default:
			// EPIPE: the caller has stopped reading for good.
			d.close()
		}
	}
	return len(p) == 0
}

func (d *displayOut) close() {
	if d != nil && d.fd >= 0 {
		unix.Close(d.fd)
		d.fd = -1
	}
}
