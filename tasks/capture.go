package tasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// DefaultOutputMaxBytes caps an output file when the record names no cap.
const DefaultOutputMaxBytes = 32 << 20

// captureIdleFlush is how long a partial line (a prompt, a progress bar) may
// sit unwritten: long enough to collapse fast CR redraws, short enough that
// `qtask logs` shows what the command is waiting on.
const captureIdleFlush = time.Second

// scrollbackTimeout bounds the wait for an adopter that died mid-way.
const scrollbackTimeout = 5 * time.Second

// captureChunk bounds one read: the capture's input memory, whatever the
// volume.
const captureChunk = 32 << 10

// captureDrain is how long the pipe must be quiet before queued lines are
// written out.
const captureDrain = 2 * time.Millisecond

// Capture is `qtask _capture ID`, the far end of the pane's pipe-pane. It
// cleans the raw terminal stream into the task's output file and, when it
// sees the wrapper's end marker (or its input ends), flushes and marks the
// output complete so the task may settle.
//
// tmux writes the pipe in small pieces. The capture reads on one goroutine
// and writes the file in large batches: whenever the pipe has been quiet for
// captureDrain (so `qtask logs -f` lags by no more than that), or a batch is
// full. A partial line (a prompt) is written after captureIdleFlush.
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
	limit := r.OutputMaxBytes
	if limit <= 0 {
		limit = DefaultOutputMaxBytes
	}
	out, err := OpenCapped(r.OutputPath, limit)
	if err != nil {
		return err
	}
	sawEnd := false
	cleaner := NewCleaner(out, CleanerOptions{EndMarker: r.EndMarker, OnEndMarker: func() { sawEnd = true }, HoldOutput: true})

	in, timed := pollable(in)
	buf := make([]byte, captureChunk)
	held := false // complete lines queued in the cleaner
	var writeErr error
	for !sawEnd {
		if timed {
			wait := captureIdleFlush
			if held {
				wait = captureDrain
			}
			in.SetReadDeadline(time.Now().Add(wait))
		}
		n, err := in.Read(buf)
		if n > 0 && writeErr == nil {
			_, writeErr = cleaner.Write(buf[:n])
			held = true
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if writeErr == nil && held {
				writeErr = cleaner.Flush()
			} else if writeErr == nil {
				writeErr = cleaner.FlushPartial()
			}
			held = false
		case err != nil:
			sawEnd = true // EOF: the pane is gone
		case !timed && writeErr == nil:
			writeErr = cleaner.Flush()
		}
	}
	if err := cleaner.Close(); writeErr == nil {
		writeErr = err
	}
	if err := out.Close(); writeErr == nil {
		writeErr = err
	}
	_, err = s.update(id, func(r *record) error {
		r.OutputComplete = true
		return nil
	})
	if writeErr != nil {
		return fmt.Errorf("write output of task %s: %w", id, writeErr)
	}
	return err
}

// pollable returns in as a file whose reads can time out, and whether that
// worked. A pipe inherited as stdin is in blocking mode, which the runtime
// poller cannot time out: switch it to non-blocking and wrap it anew.
func pollable(in *os.File) (*os.File, bool) {
	if in.SetReadDeadline(time.Time{}) == nil {
		return in, true
	}
	fd := int(in.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		return in, false
	}
	f := os.NewFile(uintptr(fd), in.Name())
	if f.SetReadDeadline(time.Time{}) != nil {
		return in, false
	}
	return f, true
}
