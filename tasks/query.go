package tasks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/qtask/qtask/tasks/capped"
	"github.com/qtask/qtask/tasks/output"
	"github.com/qtask/qtask/tmux"
)

// Filter narrows List; zero fields match everything.
type Filter struct {
	Status Status
	Scope  string
}

// List returns every task, oldest first, after settling any whose process
// vanished. Records that cannot be read are skipped and described in
// warnings, so one corrupt file never breaks `ls`.
func (s *Store) List(ctx context.Context, f Filter) ([]*Task, []string, error) {
	recs, warnings, err := s.loadAll()
	if err != nil {
		return nil, nil, err
	}
	out := make([]*Task, 0, len(recs))
	for _, r := range recs {
		r = s.reconcile(ctx, r)
		if f.Status != "" && r.Status != f.Status || f.Scope != "" && r.Scope != f.Scope {
			continue
		}
		out = append(out, &r.Task)
	}
	return out, warnings, nil
}

// Get resolves an id or unique prefix and returns the task, reconciled.
func (s *Store) Get(ctx context.Context, idOrPrefix string) (*Task, error) {
	r, err := s.get(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	return &r.Task, nil
}

func (s *Store) get(ctx context.Context, idOrPrefix string) (*record, error) {
	id, err := s.Resolve(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	r, err := s.load(id)
	if err != nil {
		return nil, err
	}
	return s.reconcile(ctx, r), nil
}

// OutputTail returns up to the last n characters of a task's output, fit
// for a terminal (see printFilter), and whether earlier output was left out.
func (s *Store) OutputTail(t *Task, n int) (string, bool, error) {
	tail, cut, err := output.LastChars(t.OutputPath, n)
	return output.PrintText(tail), cut, err
}

// waitFor re-reads (and reconciles) the record until done says so or the
// timeout passes, watching the tasks directory so it wakes on the write
// rather than on a timer. It returns the last record read.
func (s *Store) waitFor(ctx context.Context, id string, timeout time.Duration, done func(*record) bool) (*record, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last *record
	err := s.watchRecords(ctx, []string{id}, false, func(rs []*record) (bool, error) {
		last = rs[0]
		return done(last), nil
	})
	switch {
	case err == nil:
		return last, nil
	case err != ctx.Err():
		return nil, err // the record could not be read
	case errors.Is(err, context.DeadlineExceeded):
		return last, nil
	}
	return last, err
}

// ReadOutput copies the task's output from offset, at most limit bytes
// (limit <= 0: no limit), to w, fit for a terminal (see printFilter). The
// few bytes either side of the range are read too, so a rune the range
// cuts is judged whole.
func (s *Store) ReadOutput(t *Task, w io.Writer, offset, limit int64) error {
	f, err := capped.OpenRead(t.OutputPath)
	if err != nil {
		return fmt.Errorf("open output of task %s: %w", t.ID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read output of task %s: %w", t.ID, err)
	}
	if offset >= fi.Size() {
		return nil // nothing there (yet); a seek that far may even fail
	}
	start := max(offset-output.PrintContext, 0)
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seek output of task %s: %w", t.ID, err)
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, offset-start+limit+output.PrintContext)
	} else {
		limit = -1
	}
	_, err = io.Copy(output.NewPrintFilter(w, offset-start, limit), r)
	return err
}

// OutputSize is the size in bytes of the task's output file as it stands,
// the range ReadOutput offsets are in.
func (s *Store) OutputSize(t *Task) (int64, error) {
	f, err := capped.OpenRead(t.OutputPath)
	if err != nil {
		return 0, fmt.Errorf("open output of task %s: %w", t.ID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read output of task %s: %w", t.ID, err)
	}
	return fi.Size(), nil
}

// WriteOutputTail writes the last n lines of the task's output to w and
// returns the file offset it stopped at.
func (s *Store) WriteOutputTail(t *Task, w io.Writer, n int) (int64, error) {
	return s.writeTail(t, w, n, false)
}

// WriteSettledTail is WriteOutputTail for a Follow to pick up from: it
// leaves out the rows a program is still redrawing (see capped.File), which
// would otherwise be printed twice, as they are now and as they end.
func (s *Store) WriteSettledTail(t *Task, w io.Writer, n int) (int64, error) {
	return s.writeTail(t, w, n, true)
}

// writeTail writes the last n lines of the task's output, of its final and
// settled text only if settled is set, and returns where they end.
func (s *Store) writeTail(t *Task, w io.Writer, n int, settled bool) (int64, error) {
	f, err := capped.OpenRead(t.OutputPath)
	if err != nil {
		return 0, fmt.Errorf("open output of task %s: %w", t.ID, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("read output of task %s: %w", t.ID, err)
	}
	end := fi.Size()
	if settled {
		_, end = capped.FinalEnds(f, end)
	}
	tail, err := output.ReadTailTo(f, n, end)
	if err != nil {
		return 0, fmt.Errorf("read output of task %s: %w", t.ID, err)
	}
	_, err = output.NewPrintFilter(w, 0, -1).Write(tail)
	return end, err
}

// ServerOf is the tmux server holding the task's pane, as recorded at start.
func (s *Store) ServerOf(t *Task) (tmux.Server, error) {
	r, err := s.load(t.ID)
	if err != nil {
		return tmux.Server{}, err
	}
	return r.server()
}

// server is the tmux server holding the task's pane, or why there is none
// on record.
func (r *record) server() (tmux.Server, error) {
	if r.TmuxServer == (tmux.Server{}) {
		return tmux.Server{}, fmt.Errorf("task %s has no tmux server on record", r.ID)
	}
	return r.TmuxServer, nil
}
