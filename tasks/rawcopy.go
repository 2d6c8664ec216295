package tasks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/capture"
)

// The raw copy (keep_raw_output): the pane's bytes, escapes and colours
// included, which the capture keeps beside the output file
// (capture.RawPath) for `qtask logs --raw`; here it is read. The output
// file stays the record qtask vouches for.

// NoRawOutputError is `logs --raw` of a task without a raw copy.
type NoRawOutputError struct{ ID string }

func (e *NoRawOutputError) Error() string {
	return fmt.Sprintf("task %s has no raw copy of its output: one is kept only for tasks started with keep_raw_output = true in the config (qtask logs %[1]s prints its clean output)", e.ID)
}

// WriteRawOutput copies t's raw copy to w as it is, escapes included: for
// a person's terminal, never an agent's context.
func (s *Store) WriteRawOutput(t *Task, w io.Writer) error {
	f, err := capped.OpenRead(capture.RawPath(t.OutputPath))
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
