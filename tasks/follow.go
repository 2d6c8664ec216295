package tasks

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
)

// Follow writes the task's output from offset onwards as it grows and
// returns once the task has ended and its complete output has been written.
// When the output file is rotated by its size cap, following continues in
// the new file from the same point of the stream (or from the oldest output
// kept, if the reader fell behind further than the cap).
func (s *Store) Follow(ctx context.Context, t *Task, w io.Writer, offset int64) error {
	w2 := s.watch()
	defer w2.Close()
	var f *os.File
	var ino uint64
	var dropped, headerLen int64
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for {
		// Check for the end before reading, so the final read below is
		// guaranteed to see everything the settled task printed.
		r, err := s.load(t.ID)
		if err != nil {
			return err
		}
		r = s.reconcile(r)
		ended := !r.Running()

		nf, err := os.Open(t.OutputPath)
		if err != nil {
			return fmt.Errorf("open output of task %s: %w", t.ID, err)
		}
		nino, err := inode(nf)
		if err != nil {
			nf.Close()
			return err
		}
		if f == nil || nino != ino {
			// First open, or the file was rotated: translate the position
			// through the stream-wide offset the cap header records.
			nd, nh := readCapHeader(nf)
			if f != nil {
				stream := dropped + (offset - headerLen)
				offset = max(stream-nd+nh, nh)
				f.Close()
			}
			f, ino, dropped, headerLen = nf, nino, nd, nh
		} else {
			nf.Close()
		}
		n, err := copyFrom(f, w, offset)
		offset += n
		if err != nil {
			return err
		}
		if ended {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w2.C:
		}
	}
}

func copyFrom(f *os.File, w io.Writer, offset int64) (int64, error) {
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	return io.Copy(w, f)
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

// readCapHeader parses the header a capped output file starts with and
// returns how many stream bytes were dropped before the file's content and
// the header's length; (0, 0) for a file that was never capped.
func readCapHeader(f *os.File) (dropped, length int64) {
	line, err := bufio.NewReaderSize(io.NewSectionReader(f, 0, 256), 256).ReadString('\n')
	if err != nil {
		return 0, 0
	}
	var limit int64
	if _, err := fmt.Sscanf(line, capHeaderFormat, &limit, &dropped); err != nil {
		return 0, 0
	}
	return dropped, int64(len(line))
}
