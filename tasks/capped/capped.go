// Package capped is the task output file: appended to, bounded in size
// (keeping the newest output, with a header saying how much was dropped),
// its live tail rewritten in place and marked so that readers can tell
// final text from text still being redrawn.
package capped

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// headerFormat is the first line of an output file that has been
// capped. Its second number is how many bytes of the task's output stream
// precede the file's content, so readers can map file offsets to stream
// offsets across rotations, and a reopened file keeps counting.
const headerFormat = "[qtask: output capped at %d bytes; %d earlier bytes dropped]\n"

// DefaultMaxBytes is the cap of an output file when nothing configures
// one: the config's default for output_max_bytes, and the cap of a
// record from before records named theirs.
const DefaultMaxBytes = 32 << 20

const (
	// copyBuf is the one buffer a rotation copies through, so its memory
	// does not depend on the cap.
	copyBuf = 32 << 10
	// headerMax is more than any header line can be.
	headerMax = 256
)

// File appends to an output file and keeps it at most maxBytes of
// content (plus one header line), keeping the newest output: a task that
// prints forever must not fill the disk, and its latest output is what
// people look at.
//
// The file is final text followed by a tail that is rewritten in place as
// it changes (the pane's live rows: see SetTail). Where the final text ends,
// and where the settled start of the tail ends, are kept in the file's
// extended attribute finalAttr, so that a reader that streams the file
// (logs -f) can stop there rather than print text that is redrawn.
// Writes go to explicit offsets, never truncating first, so a reader never
// sees a final line missing. It is not safe for concurrent use.
type File struct {
	path    string
	max     int64
	file    *os.File
	size    int64  // bytes of text in the file, header and tail included
	tail    int64  // bytes of the tail at the end of size
	end     int64  // the file's length: beyond size are stale tail bytes
	header  int64  // length of the header line; 0 if there is none
	dropped int64  // stream bytes before the file's content
	settled int64  // bytes at the start of the tail that are settled
	marked  string // the value last stored in finalAttr
	buf     []byte // the copy buffer for rotations
	// file is nil when a rotation replaced the file but it could not be
	// reopened; the next write tries again.
}

// finalAttr is the extended attribute holding, as two decimal numbers, the
// offsets where an output file's final text ends (its live tail begins)
// and where the tail's settled lines end. A file without it (an older
// qtask, a file system without user attributes) is all final.
const finalAttr = "user.qtask.final"

// Open opens an existing output file for appending and keeps it at
// most maxBytes (plus one header line), keeping the newest output. It never
// follows a symlink at path and refuses anything but a regular file. If the
// file was capped before, the count of dropped bytes carries on from its
// header.
func Open(path string, maxBytes int64) (*File, error) {
	if maxBytes < 2 {
		return nil, fmt.Errorf("open output %s: cap of %d bytes is too small", path, maxBytes)
	}
	f, err := openWrite(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errors.New("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open output %s: %w", path, err)
	}
	c := &File{path: path, max: maxBytes, file: f, size: fi.Size(), end: fi.Size(), buf: make([]byte, copyBuf)}
	if c.dropped, c.header, err = ReadHeader(path); err != nil {
		f.Close()
		return nil, err
	}
	// Mark the file before anything is written: a reader takes a file
	// without the mark for all final, so a tail written first would be
	// streamed as final text in the moment before its mark.
	c.markFinal()
	return c, nil
}

// openNoFollow opens path without following a symlink, and without blocking
// should it be a FIFO (which Open then refuses).
func openNoFollow(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// openWrite opens path for writing at offsets: not O_APPEND, under
// which Linux ignores the offset of pwrite.
func openWrite(path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_WRONLY)
	if err != nil {
		return nil, fmt.Errorf("open output %s: %w", path, err)
	}
	return f, nil
}

// ReadHeader returns the dropped count and length of the header the
// file at path starts with; zeros if it has none.
func ReadHeader(path string) (dropped, length int64, err error) {
	r, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return 0, 0, fmt.Errorf("read output header %s: %w", path, err)
	}
	defer r.Close()
	return HeaderOf(r)
}

// HeaderOf is ReadHeader for a file already open for reading: the header
// of that very file, which a rotation since the open (a new file at the
// path) does not change.
func HeaderOf(f *os.File) (dropped, length int64, err error) {
	var buf [headerMax]byte
	n, err := f.ReadAt(buf[:], 0)
	if err != nil && err != io.EOF {
		return 0, 0, fmt.Errorf("read output header %s: %w", f.Name(), err)
	}
	dropped, length = ParseHeader(buf[:n])
	return dropped, length, nil
}

// ParseHeader parses a header line at the start of b exactly as
// headerFormat writes it; zeros if there is none.
func ParseHeader(b []byte) (dropped, length int64) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return 0, 0
	}
	line := string(b[:i+1])
	var limit int64
	if _, err := fmt.Sscanf(line, headerFormat, &limit, &dropped); err != nil {
		return 0, 0
	}
	if dropped < 0 || fmt.Sprintf(headerFormat, limit, dropped) != line {
		return 0, 0
	}
	return dropped, int64(len(line))
}

// Write appends p to the final text, over the tail: the tail is gone
// until the next SetTail. When that would take the content beyond the cap,
// the file is rotated first: see rotate. It returns len(p) on success.
func (c *File) Write(p []byte) (int, error) {
	c.size -= c.tail
	c.tail, c.settled = 0, 0
	n, err := c.put(p, false)
	c.markFinal()
	return n, err
}

// SetTail replaces the tail with p: text shown after the final text that
// later writes replace; its first settled bytes are whole lines unlikely to
// change. The final text is untouched and stays readable throughout: p is
// written over the old tail, then the file is cut to its end.
func (c *File) SetTail(p []byte, settled int) error {
	c.size -= c.tail
	c.tail, c.settled = 0, 0
	n, err := c.put(p, true)
	c.tail, c.settled = int64(n), int64(min(settled, n))
	if err == nil {
		err = c.cut()
	}
	c.markFinal()
	return err
}

// put writes p at the end of the text, rotating first if the cap needs it;
// tail says p is the tail.
func (c *File) put(p []byte, tail bool) (int, error) {
	if c.file == nil {
		f, err := openWrite(c.path)
		if err != nil {
			return 0, err
		}
		c.file, c.marked = f, ""
	}
	if c.size-c.header+int64(len(p)) > c.max {
		if err := c.rotate(p, tail); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	n, err := c.file.WriteAt(p, c.size)
	c.size += int64(n)
	c.end = max(c.end, c.size)
	if err != nil {
		return n, fmt.Errorf("write output %s: %w", c.path, err)
	}
	return n, nil
}

// cut drops stale tail bytes beyond the text.
func (c *File) cut() error {
	if c.end <= c.size || c.file == nil {
		return nil
	}
	if err := c.file.Truncate(c.size); err != nil {
		return fmt.Errorf("write output %s: %w", c.path, err)
	}
	c.end = c.size
	return nil
}

// markFinal stores where the final and settled text end, if that moved.
// It is a hint for streaming readers, so a failure (no user attributes
// here) is ignored: they then take the whole file for final.
func (c *File) markFinal() {
	mark := finalMark(c.size-c.tail, c.settled)
	if c.file == nil || mark == c.marked {
		return
	}
	if unix.Fsetxattr(int(c.file.Fd()), finalAttr, []byte(mark), 0) == nil {
		c.marked = mark
	}
}

// finalMark is finalAttr's value for final text ending at final, followed
// by settled bytes.
func finalMark(final, settled int64) string {
	return strconv.FormatInt(final, 10) + " " + strconv.FormatInt(final+settled, 10)
}

// Close cuts stale tail bytes and closes the file. The tail, if any, stays
// in the file as it is.
func (c *File) Close() error {
	if c.file == nil {
		return nil
	}
	err := c.cut()
	if cerr := c.file.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close output %s: %w", c.path, cerr)
	}
	c.file = nil
	return err
}

// rotate replaces the file by a header and the newest maxBytes/2 bytes of
// its content followed by p (the tail, if tail is set), starting at a line
// boundary. The new file is written beside the old one and renamed over
// it, so readers see either the old or the new file whole. If it fails
// before the rename the old file is left as it was.
func (c *File) rotate(p []byte, tail bool) error {
	src := source{base: c.header, n: c.size - c.header, p: p}
	keep := c.max / 2
	cut := src.total() - keep
	if cut-1 < src.n {
		r, err := openNoFollow(c.path, os.O_RDONLY)
		if err != nil {
			return fmt.Errorf("rotate output %s: %w", c.path, err)
		}
		defer r.Close()
		src.file = r
	}
	start, err := src.lineStart(cut, keep/2, c.buf)
	if err != nil {
		return fmt.Errorf("rotate output %s: %w", c.path, err)
	}
	header := fmt.Sprintf(headerFormat, c.max, c.dropped+start)
	final := int64(len(header)) + src.total() - start
	if tail {
		final -= int64(len(p)) // nothing of it settled yet: SetTail marks that
	}
	if err := c.replace(header, &src, start, finalMark(final, 0)); err != nil {
		return err
	}
	c.dropped += start
	c.header = int64(len(header))
	c.size = c.header + src.total() - start
	c.end = c.size
	return nil
}

// replace writes header and src from start into a new file, marks where
// its final text ends, renames it over the output file and reopens that.
func (c *File) replace(header string, src *source, start int64, mark string) error {
	tmp, err := createTemp(c.path)
	if err != nil {
		return err
	}
	unix.Fsetxattr(int(tmp.Fd()), finalAttr, []byte(mark), 0) // a hint: see markFinal
	_, err = io.WriteString(tmp, header)
	if err == nil {
		err = src.copyTo(tmp, start, c.buf)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), c.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rotate output %s: %w", c.path, err)
	}
	c.file.Close()
	// p is in the new file whatever happens now: a failure to reopen it
	// is the next write's to retry, not this one's.
	c.file, _ = openWrite(c.path) // nil on failure
	c.marked = mark
	return nil
}

// createTemp creates a new, private file beside path.
func createTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	name := filepath.Join(dir, "."+base+".rotate-"+rand.Text())
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rotate output %s: %w", path, err)
	}
	return f, nil
}

// source is the content being rotated: n bytes of file from offset base
// (the old content), followed by p (the write that overflowed).
type source struct {
	file    *os.File
	base, n int64
	p       []byte
}

func (s *source) total() int64 { return s.n + int64(len(s.p)) }

// chunk returns bytes from offset off on: read from the file into buf, or
// a slice of p.
func (s *source) chunk(off int64, buf []byte) ([]byte, error) {
	if off >= s.n {
		return s.p[off-s.n:], nil
	}
	b := buf[:min(int64(len(buf)), s.n-off)]
	if _, err := s.file.ReadAt(b, s.base+off); err != nil {
		return nil, err
	}
	return b, nil
}

// lineStart returns where kept content from cut on should start: after
// the first newline at or after cut-1 (so cut itself if a line starts
// there), looking no further than limit bytes. Without one (very long
// lines) it starts mid-line, but on a rune boundary.
func (s *source) lineStart(cut, limit int64, buf []byte) (int64, error) {
	end := min(cut+limit, s.total())
	for off := cut - 1; off < end; {
		b, err := s.chunk(off, buf)
		if err != nil {
			return 0, err
		}
		b = b[:min(int64(len(b)), end-off)]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		off += int64(len(b))
	}
	b, err := s.chunk(cut, buf)
	if err != nil {
		return 0, err
	}
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return cut + int64(i), nil
		}
	}
	return cut, nil
}

// copyTo writes the content from start on to w through buf.
func (s *source) copyTo(w io.Writer, start int64, buf []byte) error {
	for off := start; off < s.total(); {
		b, err := s.chunk(off, buf)
		if err == nil {
			_, err = w.Write(b)
		}
		if err != nil {
			return err
		}
		off += int64(len(b))
	}
	return nil
}

// OpenRead opens an output file for reading, never through a symlink and
// never a FIFO or device (opened without blocking, then refused): a file
// planted in output/ can neither show another file nor hang the reader.
func OpenRead(path string) (*os.File, error) {
	f, err := openNoFollow(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%v)", path, fi.Mode().Type())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// FinalEnds says where the final text of an open output file of the given
// size ends, and where the settled lines after it end (see File): the
// file's size for both when it has no mark.
func FinalEnds(f *os.File, size int64) (final, settled int64) {
	var buf [48]byte
	n, err := unix.Fgetxattr(int(f.Fd()), finalAttr, buf[:])
	if err != nil {
		return size, size
	}
	a, b, ok := strings.Cut(string(buf[:n]), " ")
	final, err1 := strconv.ParseInt(a, 10, 64)
	settled, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || final < 0 || settled < final {
		return size, size
	}
	return min(final, size), min(settled, size)
}
