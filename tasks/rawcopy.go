package tasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/qtask/qtask/tasks/capped"
)

// The raw copy: with keep_raw_output set, the capture keeps the bytes the
// pane received as well, escapes and colours included, for people who want
// them (`qtask logs --raw`). Nothing else keeps them: the output file is
// rendered text, and a foreground caller's display is a pipe nobody can
// read again. The copy is a second capped file beside the output file,
// ID.raw, 0600, capped as the output file is (the newest kept), without
// qtask's end marker and without the program's questions to its terminal
// (a terminal shown them would answer into its own input). It is best
// effort: a write that fails (a full disk) ends the copy there, with a line
// saying so; the output file is the record qtask vouches for.

// NoRawOutputError is `logs --raw` of a task without a raw copy.
type NoRawOutputError struct{ ID string }

func (e *NoRawOutputError) Error() string {
	return fmt.Sprintf("task %s has no raw copy of its output: one is kept only for tasks started with keep_raw_output = true in the config (qtask logs %[1]s prints its clean output)", e.ID)
}

// rawPath is the raw copy of the task whose output file is outputPath.
func rawPath(outputPath string) string {
	return strings.TrimSuffix(outputPath, ".log") + ".raw"
}

// rawCopy is the capture's writer of the raw copy; nil: none kept.
type rawCopy struct {
	out     *capped.File
	filter  rawFilter
	stopped bool
}

// openRawCopy creates r's raw copy, capped at limit bytes; nil if r keeps
// none or it cannot be made (logs --raw then says there is none).
func openRawCopy(r *record, limit int64) *rawCopy {
	if !r.KeepRawOutput {
		return nil
	}
	path := rawPath(r.OutputPath)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, fileMode)
	if err != nil {
		return nil
	}
	f.Close()
	out, err := capped.Open(path, limit)
	if err != nil {
		return nil
	}
	return &rawCopy{out: out, filter: newRawFilter(r.EndMarker)}
}

// write appends the pane's bytes p.
func (c *rawCopy) write(p []byte) {
	if c == nil || c.stopped {
		return
	}
	b := c.filter.pass(p)
	if len(b) == 0 {
		return
	}
	if _, err := c.out.Write(b); err != nil {
		c.stopped = true
		c.out.Write([]byte("\x1b[0m\r\n[qtask: the raw copy stops here: " + err.Error() + "]\r\n"))
	}
}

func (c *rawCopy) close() {
	if c != nil {
		c.out.Close()
	}
}

// WriteRawOutput copies t's raw copy to w as it is, escapes included: for
// a person's terminal, never an agent's context.
func (s *Store) WriteRawOutput(t *Task, w io.Writer) error {
	f, err := capped.OpenRead(rawPath(t.OutputPath))
	if errors.Is(err, fs.ErrNotExist) {
		return &NoRawOutputError{ID: t.ID}
	}
	if err != nil {
		return fmt.Errorf("open raw output of task %s: %w", t.ID, err)
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
