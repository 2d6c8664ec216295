package tasks

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/capture"
)

// scrollbackTimeout bounds the wait for an adopter that died mid-way.
const scrollbackTimeout = 5 * time.Second

// Capture is `qtask _capture ID`, the far end of an adopted pane's
// pipe-pane. It cleans the raw terminal stream into the task's output file
// and, when it sees the end marker (or its input ends), flushes and marks
// the output acknowledged so the task may settle. An input that ends
// before the marker is no proof that everything came through: the output
// is then said to be incomplete, in the record and at the end of the file.
func (s *Store) Capture(id string, in *os.File) error {
	r, err := s.load(id)
	if err != nil {
		return err
	}
	if r.AwaitScrollback {
		// An adopted pane: its scrollback goes into the file first. The
		// pane's new output waits in the pipe (and tmux) meanwhile.
		r, err = s.waitFor(context.Background(), id, scrollbackTimeout, func(r *record) bool { return !r.AwaitScrollback })
		if err != nil {
			return err
		}
	}
	// The pane's terminal is the adopted shell's: its size is the pane's.
	tty, _ := os.OpenFile(fmt.Sprintf("/proc/%d/fd/0", r.WrapperPID), os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
	if tty != nil {
		defer tty.Close()
	}
	c, err := capture.OpenAdopted(s.outputFile(r), tty, func() (capture.Seed, bool, error) { return s.takeSeed(id) })
	if err != nil {
		return err
	}
	writeErr := c.Copy(in, time.Now().Add(settleRetryMax))
	// The acknowledgement the task's settle waits for: not to be cut short.
	_, err = s.update(context.Background(), id, func(r *record) error {
		r.OutputAcked = true
		return nil
	})
	if writeErr != nil {
		return fmt.Errorf("write output of task %s: %w", id, writeErr)
	}
	return err
}

// outputFile is what the capture needs to know of task r to write its
// output file. Losses are noted on the record as they happen (best
// effort: the settle records them in any case).
func (s *Store) outputFile(r *record) capture.File {
	id := r.ID
	return capture.File{
		ID: id, Path: r.OutputPath, MaxBytes: r.OutputMaxBytes, EndMarker: r.EndMarker,
		Command: r.Command, KeepFullScreen: r.KeepFullScreen, KeepRaw: r.KeepRawOutput,
		// The capture's own write: it waits for the lock as long as it takes.
		OnLoss: func(loss string) { s.noteLoss(context.Background(), id, loss) },
	}
}
