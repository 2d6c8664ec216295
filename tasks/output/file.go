package output

import (
	"fmt"
	"io"
	"os"

	"github.com/qtask/qtask/tasks/capped"
)

// File is a task's output file as its readers (`qtask logs`, `status`, an
// agent's output tool) read it: every read is fit for a terminal (see
// PrintFilter), and an error names the task.
type File struct {
	Task string // the task's id, for errors
	Path string
}

// open opens the output file for reading and gives its size as it
// stands.
func (o File) open() (*os.File, int64, error) {
	f, err := capped.OpenRead(o.Path)
	if err != nil {
		return nil, 0, fmt.Errorf("open output of task %s: %w", o.Task, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("read output of task %s: %w", o.Task, err)
	}
	return f, fi.Size(), nil
}

// Read copies the output from offset, at most limit bytes (limit <= 0:
// no limit), to w, fit for a terminal. The few bytes either side of the
// range are read too, so a rune the range cuts is judged whole.
func (o File) Read(w io.Writer, offset, limit int64) error {
	f, size, err := o.open()
	if err != nil {
		return err
	}
	defer f.Close()
	if offset >= size {
		return nil // nothing there (yet); a seek that far may even fail
	}
	start := max(offset-PrintContext, 0)
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seek output of task %s: %w", o.Task, err)
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, offset-start+limit+PrintContext)
	} else {
		limit = -1
	}
	_, err = io.Copy(NewPrintFilter(w, offset-start, limit), r)
	return err
}

// Size is the size in bytes of the output file as it stands, the range
// Read's offsets are in.
func (o File) Size() (int64, error) {
	f, size, err := o.open()
	if err != nil {
		return 0, err
	}
	f.Close()
	return size, nil
}

// WriteTail writes the last n lines of the output to w and returns the
// file offset it stopped at.
func (o File) WriteTail(w io.Writer, n int) (int64, error) {
	return o.writeTail(w, n, false)
}

// WriteSettledTail is WriteTail for a follow to pick up from: it leaves
// out the rows a program is still redrawing (see capped.File), which would
// otherwise be printed twice, as they are now and as they end.
func (o File) WriteSettledTail(w io.Writer, n int) (int64, error) {
	return o.writeTail(w, n, true)
}

// writeTail writes the last n lines of the output, of its final and
// settled text only if settled is set, and returns where they end.
func (o File) writeTail(w io.Writer, n int, settled bool) (int64, error) {
	f, end, err := o.open()
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if settled {
		_, end = capped.FinalEnds(f, end)
	}
	tail, err := ReadTailTo(f, n, end)
	if err != nil {
		return 0, fmt.Errorf("read output of task %s: %w", o.Task, err)
	}
	_, err = NewPrintFilter(w, 0, -1).Write(tail)
	return end, err
}

// Tail returns up to the last n characters of the output, fit for a
// terminal, and whether earlier output was left out.
func (o File) Tail(n int) (string, bool, error) {
	tail, cut, err := LastChars(o.Path, n)
	return PrintText(tail), cut, err
}

// LastBytes returns up to the last n bytes of the output as the file holds
// them (not made fit for a terminal; they may begin inside a character),
// and whether earlier output was left out.
func (o File) LastBytes(n int) ([]byte, bool, error) {
	f, size, err := o.open()
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	tail, cut, err := lastBytes(f, size, int64(n))
	if err != nil {
		return nil, false, fmt.Errorf("read output of task %s: %w", o.Task, err)
	}
	return tail, cut, nil
}
