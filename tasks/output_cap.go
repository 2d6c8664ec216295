package tasks

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"unicode/utf8"
)

// capHeaderFormat is the first line of an output file that has been
// capped. Its second number is how many bytes of the task's output stream
// precede the file's content, so readers can map file offsets to stream
// offsets across rotations, and a reopened file keeps counting.
const capHeaderFormat = "[qtask: output capped at %d bytes; %d earlier bytes dropped]\n"

const (
	// capCopyBuf is the one buffer a rotation copies through, so its memory
	// does not depend on the cap.
	capCopyBuf = 32 << 10
	// capHeaderMax is more than any header line can be.
	capHeaderMax = 256
)

// CappedFile appends to an output file and keeps it at most maxBytes of
// content (plus one header line), keeping the newest output: a task that
// prints forever must not fill the disk, and its latest output is what
// people look at. It is not safe for concurrent use.
type CappedFile struct {
	path    string
	max     int64
	file    *os.File
	size    int64  // bytes in the file, header included
	header  int64  // length of the header line; 0 if there is none
	dropped int64  // stream bytes before the file's content
	buf     []byte // the copy buffer for rotations
	// file is nil when a rotation replaced the file but it could not be
	// reopened; the next write tries again.
}

// OpenCapped opens an existing output file for appending and keeps it at
// most maxBytes (plus one header line), keeping the newest output. It never
// follows a symlink at path and refuses anything but a regular file. If the
// file was capped before, the count of dropped bytes carries on from its
// header.
func OpenCapped(path string, maxBytes int64) (*CappedFile, error) {
	if maxBytes < 2 {
		return nil, fmt.Errorf("open output %s: cap of %d bytes is too small", path, maxBytes)
	}
	f, err := capOpenAppend(path)
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
	c := &CappedFile{path: path, max: maxBytes, file: f, size: fi.Size(), buf: make([]byte, capCopyBuf)}
	if c.dropped, c.header, err = capReadHeader(path); err != nil {
		f.Close()
		return nil, err
	}
	return c, nil
}

// capOpen opens path without following a symlink, and without blocking
// should it be a FIFO (which OpenCapped then refuses).
func capOpen(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// capOpenAppend opens path for appending.
func capOpenAppend(path string) (*os.File, error) {
	f, err := capOpen(path, os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return nil, fmt.Errorf("open output %s: %w", path, err)
	}
	return f, nil
}

// capReadHeader returns the dropped count and length of the header the
// file at path starts with; zeros if it has none.
func capReadHeader(path string) (dropped, length int64, err error) {
	r, err := capOpen(path, os.O_RDONLY)
	if err != nil {
		return 0, 0, fmt.Errorf("read output header %s: %w", path, err)
	}
	defer r.Close()
	var buf [capHeaderMax]byte
	n, err := io.ReadFull(r, buf[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return 0, 0, fmt.Errorf("read output header %s: %w", path, err)
	}
	dropped, length = capParseHeader(buf[:n])
	return dropped, length, nil
}

// capParseHeader parses a header line at the start of b exactly as
// capHeaderFormat writes it; zeros if there is none.
func capParseHeader(b []byte) (dropped, length int64) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return 0, 0
	}
	line := string(b[:i+1])
	var limit int64
	if _, err := fmt.Sscanf(line, capHeaderFormat, &limit, &dropped); err != nil {
		return 0, 0
	}
	if dropped < 0 || fmt.Sprintf(capHeaderFormat, limit, dropped) != line {
		return 0, 0
	}
	return dropped, int64(len(line))
}

// Write appends p. When that would take the content beyond the cap, the
// file is rotated first: see rotate. It returns len(p) on success.
func (c *CappedFile) Write(p []byte) (int, error) {
	if c.file == nil {
		f, err := capOpenAppend(c.path)
		if err != nil {
			return 0, err
		}
		c.file = f
	}
	if c.size-c.header+int64(len(p)) > c.max {
		if err := c.rotate(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	n, err := c.file.Write(p)
	c.size += int64(n)
	if err != nil {
		return n, fmt.Errorf("write output %s: %w", c.path, err)
	}
	return n, nil
}

// Close closes the file.
func (c *CappedFile) Close() error {
	if c.file == nil {
		return nil
	}
	err := c.file.Close()
	c.file = nil
	if err != nil {
		return fmt.Errorf("close output %s: %w", c.path, err)
	}
	return nil
}

// rotate replaces the file by a header and the newest maxBytes/2 bytes of
// its content followed by p, starting at a line boundary. The new file is
// written beside the old one and renamed over it, so readers see either
// the old or the new file whole. If it fails before the rename the old
// file is left as it was.
func (c *CappedFile) rotate(p []byte) error {
	src := capSource{base: c.header, n: c.size - c.header, p: p}
	keep := c.max / 2
	cut := src.total() - keep
	if cut-1 < src.n {
		r, err := capOpen(c.path, os.O_RDONLY)
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
	header := fmt.Sprintf(capHeaderFormat, c.max, c.dropped+start)
	if err := c.replace(header, &src, start); err != nil {
		return err
	}
	c.dropped += start
	c.header = int64(len(header))
	c.size = c.header + src.total() - start
	return nil
}

// replace writes header and src from start into a new file, renames it
// over the output file and reopens that for appending.
func (c *CappedFile) replace(header string, src *capSource, start int64) error {
	tmp, err := capCreateTemp(c.path)
	if err != nil {
		return err
	}
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
	c.file, _ = capOpenAppend(c.path) // nil on failure
	return nil
}

// capCreateTemp creates a new, private file beside path.
func capCreateTemp(path string) (*os.File, error) {
	dir, base := filepath.Split(path)
	name := filepath.Join(dir, "."+base+".rotate-"+rand.Text())
	f, err := os.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rotate output %s: %w", path, err)
	}
	return f, nil
}

// capSource is the content being rotated: n bytes of file from offset base
// (the old content), followed by p (the write that overflowed).
type capSource struct {
	file    *os.File
	base, n int64
	p       []byte
}

func (s *capSource) total() int64 { return s.n + int64(len(s.p)) }

// chunk returns bytes from offset off on: read from the file into buf, or
// a slice of p.
func (s *capSource) chunk(off int64, buf []byte) ([]byte, error) {
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
func (s *capSource) lineStart(cut, limit int64, buf []byte) (int64, error) {
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
func (s *capSource) copyTo(w io.Writer, start int64, buf []byte) error {
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
