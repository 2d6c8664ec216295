package tasks

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
)

// follower copies a growing output file to a writer, picking up where it
// left off. When the file is rotated by its size cap (a new inode whose
// header records how many stream bytes were dropped), it translates its
// position into the new file, so nothing is printed twice and nothing still
// on disk is skipped.
type follower struct {
	path      string
	f         *os.File
	ino       uint64
	dropped   int64 // stream bytes before the open file's content
	headerLen int64 // length of the open file's cap header
	offset    int64 // position in the open file
}

func newFollower(path string, offset int64) *follower {
	return &follower{path: path, offset: offset}
}

// capDroppedFormat marks, in a followed stream, output that a cap rotation
// removed before the follower could read it: skipped, but never silently.
const capDroppedFormat = "[qtask: %d bytes dropped by the output cap]\n"

// copyNew writes everything appended since the last call.
func (fl *follower) copyNew(w io.Writer) error {
	nf, err := openOutput(fl.path)
	if err != nil {
		return fmt.Errorf("open output: %w", err)
	}
	ino, err := inode(nf)
	if err != nil {
		nf.Close()
		return err
	}
	if fl.f == nil || ino != fl.ino {
		dropped, headerLen, err := capReadHeader(fl.path)
		if err != nil {
			nf.Close()
			return err
		}
		if fl.f != nil {
			stream := fl.dropped + (fl.offset - fl.headerLen)
			fl.offset = max(stream-dropped+headerLen, headerLen)
			fl.f.Close()
			if stream < dropped {
				if _, err := fmt.Fprintf(w, capDroppedFormat, dropped-stream); err != nil {
					nf.Close()
					return err
				}
			}
		}
		fl.f, fl.ino, fl.dropped, fl.headerLen = nf, ino, dropped, headerLen
	} else {
		nf.Close()
	}
	if _, err := fl.f.Seek(fl.offset, io.SeekStart); err != nil {
		return err
	}
	n, err := io.Copy(w, fl.f)
	fl.offset += n
	return err
}

func (fl *follower) close() {
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

// Follow writes the task's output from offset onwards as it grows, fit for
// a terminal (see printFilter), and returns once the task has ended and its
// complete output has been written.
func (s *Store) Follow(ctx context.Context, t *Task, w io.Writer, offset int64) error {
	watch := s.watch([]string{t.ID}, true)
	defer watch.Close()
	start := max(offset-printContext, 0)
	w = newPrintFilter(w, offset-start, -1)
	fl := newFollower(t.OutputPath, start)
	defer fl.close()
	for {
		// Read the status before the output, so the last copy after an end
		// is seen is guaranteed to include everything the task printed.
		r, err := s.load(t.ID)
		if err != nil {
			return err
		}
		r = s.reconcile(r)
		if err := fl.copyNew(w); err != nil {
			return err
		}
		if !r.Running() {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-watch.C:
		}
	}
}
