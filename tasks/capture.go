package tasks

import (
	"context"
	"fmt"
	"io"
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

// captureChunk bounds one read; captureBuffers of them are all the
// capture's input memory, whatever the volume.
const (
	captureChunk   = 32 << 10
	captureBuffers = 4
)

// Capture is `qtask _capture ID`, the far end of the pane's pipe-pane. It
// cleans the raw terminal stream into the task's output file and, when it
// sees the wrapper's end marker (or its input ends), flushes and marks the
// output complete so the task may settle.
func (s *Store) Capture(id string, in io.Reader) error {
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
	cleaner := NewCleaner(out, CleanerOptions{EndMarker: r.EndMarker, OnEndMarker: func() { sawEnd = true }})

	chunks, free := make(chan []byte, captureBuffers), make(chan []byte, captureBuffers)
	for range captureBuffers {
		free <- make([]byte, captureChunk)
	}
	go readChunks(in, chunks, free)
	idle := time.NewTimer(captureIdleFlush)
	defer idle.Stop()
	var writeErr error
	for !sawEnd {
		select {
		case chunk, ok := <-chunks:
			if !ok {
				sawEnd = true
				break
			}
			if writeErr == nil {
				_, writeErr = cleaner.Write(chunk)
			}
			free <- chunk[:cap(chunk)]
			idle.Reset(captureIdleFlush)
		case <-idle.C:
			if writeErr == nil {
				writeErr = cleaner.FlushPartial()
			}
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

// readChunks reads the input into buffers taken from free and hands them
// over on chunks, closing chunks at EOF. The buffers are recycled: tmux
// writes the pipe in small pieces, and a fresh buffer per read would make
// garbage at the rate the command prints.
func readChunks(in io.Reader, chunks chan<- []byte, free <-chan []byte) {
	defer close(chunks)
	for {
		buf := <-free
		n, err := in.Read(buf)
		if n > 0 {
			chunks <- buf[:n]
		}
		if err != nil {
			return
		}
	}
}
