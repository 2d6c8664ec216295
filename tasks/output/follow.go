// Package output reads what the capture wrote: following an output file as
// it grows (for logs -f, a foreground run and a monitor), its tail and last
// line (for notifications and failure reasons), and printing it harmlessly
// to a terminal. It never writes an output file (that is the capture's) and
// knows a task only by what its caller hands it: the Rounds that say whether
// it still runs, and the id a File names in its errors.
package output

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/qtask/qtask/tasks/capped"
)

// Follower copies a growing output file to a writer, picking up where it
// left off. While the task runs it copies the final text and the settled
// lines of the live tail, never the rows still being redrawn (see
// capped.File); it only reads the last of those, for a terminal to show
// apart (see liveLine). Settled lines it printed are remembered until they are
// final; should one change after all, it is printed again, whole. When the
// file is rotated by its size cap (a new inode whose
// header records how many stream bytes were dropped), it translates its
// position into the new file, so nothing is printed twice and nothing still
// on disk is skipped.
type Follower struct {
	path      string
	f         *os.File
	ino       uint64
	dropped   int64 // stream bytes before the open file's content
	headerLen int64 // length of the open file's cap header
	offset    int64 // position in the open file: final text up to it is printed
	pending   []byte
	// pending is the text after offset printed already: settled lines
	// that are not final yet.
	readLive bool   // keep live up to date
	live     []byte // the last line of the tail after its settled lines
}

// NewFollower returns a Follower of the output file at path that starts
// copying at offset (a line start).
func NewFollower(path string, offset int64) *Follower {
	return &Follower{path: path, offset: offset}
}

// capDroppedFormat marks, in a followed stream, output that a cap rotation
// removed before the Follower could read it: skipped, but never silently.
const capDroppedFormat = "[qtask: %d bytes dropped by the output cap]\n"

// CopyNew writes the final text appended since the last call, and with
// all set (the task has ended, or the caller stops following) the live
// tail too.
func (fl *Follower) CopyNew(w io.Writer, all bool) error {
	if err := fl.reopen(w); err != nil {
		return err
	}
	fi, err := fl.f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	final, settled := capped.FinalEnds(fl.f, size)
	if all {
		final, settled = size, size
	}
	end := max(settled, fl.offset)
	// The tail may be rewritten, and the file cut, while this reads: a read
	// that finds the file shorter is left to the next call.
	head := make([]byte, min(int64(len(fl.pending)), end-fl.offset))
	if _, err := fl.f.ReadAt(head, fl.offset); err != nil {
		return ignoreEOF(err)
	}
	from, keep := fl.offset+int64(len(head)), false
	if i := commonPrefix(head, fl.pending); i < len(head) {
		// A settled line changed: print it again, whole.
		from = fl.offset + int64(bytes.LastIndexByte(head[:i], '\n')+1)
	} else if len(head) < len(fl.pending) {
		keep = true // fewer lines settled now: what was printed stands
	}
	next := min(max(final, fl.offset), end)
	var pending []byte
	if keep {
		pending = fl.pending[next-fl.offset:]
	} else {
		pending = make([]byte, end-next)
		if _, err := fl.f.ReadAt(pending, next); err != nil {
			return ignoreEOF(err)
		}
	}
	if _, err := io.Copy(w, io.NewSectionReader(fl.f, from, end-from)); err != nil {
		return err
	}
	fl.offset, fl.pending = next, append(fl.pending[:0], pending...)
	return fl.readLiveLine(end, size)
}

// reopen opens the output file afresh, to see whether the cap has rotated
// it since the last call (a new inode), and if so moves fl over to the new
// file (see rotated). The first call just opens it.
func (fl *Follower) reopen(w io.Writer) error {
	nf, err := capped.OpenRead(fl.path)
	if err != nil {
		return fmt.Errorf("open output: %w", err)
	}
	ino, err := inode(nf)
	if err != nil {
		nf.Close()
		return err
	}
	if fl.f != nil && ino == fl.ino {
		nf.Close()
		return nil
	}
	// The header of the file just opened: read by path, it could be a
	// newer file's, rotated in meanwhile, and its dropped count would be
	// applied to this one.
	dropped, headerLen, err := capped.HeaderOf(nf)
	if err != nil {
		nf.Close()
		return err
	}
	if fl.f != nil {
		if err := fl.rotated(w, dropped, headerLen); err != nil {
			nf.Close()
			return err
		}
	}
	fl.f, fl.ino, fl.dropped, fl.headerLen = nf, ino, dropped, headerLen
	return nil
}

// rotated translates fl's position, through the stream bytes each file's
// header says were dropped before it, into a rotated file whose header
// says dropped and is headerLen long, and closes the old file. Printed
// text the rotation dropped is not printed again; text dropped before it
// was printed is announced (capDroppedFormat), never skipped silently.
func (fl *Follower) rotated(w io.Writer, dropped, headerLen int64) error {
	stream := fl.dropped + (fl.offset - fl.headerLen)
	fl.offset = max(stream-dropped+headerLen, headerLen)
	fl.f.Close()
	if printed := stream + int64(len(fl.pending)); printed < dropped {
		// Everything printed is gone, and more.
		fl.pending = fl.pending[:0]
		_, err := fmt.Fprintf(w, capDroppedFormat, dropped-printed)
		return err
	} else if stream < dropped {
		// Printed lines that became final were dropped.
		fl.pending = fl.pending[dropped-stream:]
	}
	return nil
}

// readLiveLine keeps fl.live the last line of the rows after the settled
// ones, at [from, size) of the file: the line a program is redrawing. A
// read that finds the tail cut short keeps the line it had.
func (fl *Follower) readLiveLine(from, size int64) error {
	if !fl.readLive || from >= size {
		fl.live = fl.live[:0]
		return nil
	}
	rows := make([]byte, size-from)
	if _, err := fl.f.ReadAt(rows, from); err != nil {
		return ignoreEOF(err)
	}
	rows = bytes.TrimSuffix(rows, []byte("\n"))
	fl.live = append(fl.live[:0], rows[bytes.LastIndexByte(rows, '\n')+1:]...)
	return nil
}

// ignoreEOF is err, unless it says the file ended early.
func ignoreEOF(err error) error {
	if err == io.EOF {
		return nil
	}
	return err
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Close closes the file the Follower has open, if any.
func (fl *Follower) Close() {
	if fl.f != nil {
		fl.f.Close()
	}
}

func inode(f *os.File) (uint64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, nil
	}
	return st.Ino, nil
}

// Rounds calls round each time the task's record may have changed, with
// whether the task still runs, until round says stop or returns an error
// (which Rounds returns), or ctx is done (its error). The task store
// provides it (it watches the records); the follow functions below only
// read the output file, so they need no more of the store than this.
type Rounds func(ctx context.Context, round func(running bool) (stop bool, err error)) error

// Follow writes the output file at path from offset onwards as it grows,
// fit for a terminal (see PrintFilter), and returns once the task has
// ended (as rounds tells) and its complete output has been written.
//
// A line is written once it is final or settled. With width > 0, w is a
// terminal that many columns wide, and the line a program is still
// redrawing (a partial line, a progress bar) is shown too, below the rest,
// and replaced in place as it changes: see liveLine. Any other writer
// (a pipe, a file) gets only what will not change, since it cannot take
// back a line it was given.
func Follow(ctx context.Context, rounds Rounds, path string, w io.Writer, offset int64, width int) error {
	start := max(offset-PrintContext, 0)
	live := &liveLine{w: w, width: width}
	fl := NewFollower(path, start)
	fl.readLive = width > 0
	err := follow(ctx, rounds, fl, NewPrintFilter(live, offset-start, -1), func() error { return live.show(fl.live) })
	if err != nil && err == ctx.Err() {
		// What was being redrawn is not output yet: take it back.
		if err := live.show(nil); err != nil {
			return err
		}
	}
	return err
}

// MaxLineBytes bounds a line FollowLines gives: a longer one (a program
// printing without newlines) comes in pieces of this size, so a reader's
// memory stays bounded whatever the task prints.
const MaxLineBytes = 4096

// FollowLines calls line with each line of the output file at path from
// offset (a line start) onwards, without its newline, as the file has it:
// once the line is final or settled, as Follow writes lines to a pipe, so a
// settled line that a program changes after all comes again, whole. The
// last line comes even without a newline once the task has ended. It
// returns nil once the task has ended and every line was given, else the
// first error from line (which stops the follow) or ctx's. The slice
// line gets is only valid during the call.
func FollowLines(ctx context.Context, rounds Rounds, path string, offset int64, line func([]byte) error) error {
	lw := NewLineWriter(line)
	if err := follow(ctx, rounds, NewFollower(path, offset), lw, nil); err != nil {
		return err
	}
	return lw.Flush()
}

// follow copies the output through fl to w until the task has ended and
// all of it is copied, or ctx is done (its error), calling round (if set)
// after each copy.
func follow(ctx context.Context, rounds Rounds, fl *Follower, w io.Writer, round func() error) error {
	defer fl.Close()
	return rounds(ctx, func(running bool) (bool, error) {
		// The caller reads the status before the output, so the last copy
		// after an end is seen is guaranteed to include everything the task
		// printed.
		if err := fl.CopyNew(w, !running); err != nil {
			return false, err
		}
		if round != nil {
			if err := round(); err != nil {
				return false, err
			}
		}
		return !running, nil
	})
}

// LineWriter cuts what is written to it into lines for a callback (blank
// ones too), holding back a partial line until its end comes; a line
// longer than MaxLineBytes is given in pieces cut at a rune start.
type LineWriter struct {
	line    func([]byte) error
	partial []byte
}

// NewLineWriter returns a LineWriter giving each line to line; see
// FollowLines for what line may keep.
func NewLineWriter(line func([]byte) error) *LineWriter {
	return &LineWriter{line: line}
}

func (lw *LineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		end := bytes.IndexByte(p, '\n')
		if end < 0 {
			end = len(p)
		}
		if room := MaxLineBytes - len(lw.partial); end > room {
			cut := room
			for cut > 0 && !utf8.RuneStart(p[cut]) {
				cut--
			}
			if cut == 0 && len(lw.partial) == 0 {
				cut = room // no rune starts there: not text anyway
			}
			lw.partial = append(lw.partial, p[:cut]...)
			p = p[cut:]
		} else {
			lw.partial = append(lw.partial, p[:end]...)
			p = p[end:]
			if len(p) == 0 {
				break // the rest of the line has not come yet
			}
			p = p[1:]
		}
		if err := lw.give(); err != nil {
			return n - len(p), err
		}
	}
	return n, nil
}

// give hands the line held to the callback.
func (lw *LineWriter) give() error {
	line := lw.partial
	lw.partial = lw.partial[:0]
	return lw.line(line)
}

// Flush gives the partial line held, if any: the output has ended.
func (lw *LineWriter) Flush() error {
	if len(lw.partial) == 0 {
		return nil
	}
	return lw.give()
}
