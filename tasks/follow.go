package tasks

import (
	"context"
	"io"

	"github.com/qtask/qtask/tasks/output"
)

// Follow writes the task's output from offset onwards as it grows, fit for
// a terminal, and returns once the task has ended and its complete output
// has been written: see output.Follow (width > 0: w is a terminal that many
// columns wide, shown the line still being redrawn too).
func (s *Store) Follow(ctx context.Context, t *Task, w io.Writer, offset int64, width int) error {
	return output.Follow(ctx, s.rounds(t.ID), t.OutputPath, w, offset, width)
}

// FollowLines calls line with each line of the task's output from offset
// (a line start) onwards until the task has ended: see output.FollowLines.
func (s *Store) FollowLines(ctx context.Context, t *Task, offset int64, line func([]byte) error) error {
	return output.FollowLines(ctx, s.rounds(t.ID), t.OutputPath, offset, line)
}

// rounds is the follow's view of task id's record: a round each time the
// record or its output file may have changed, the task's status read
// afresh (and reconciled) before the output is, so the last copy after an
// end is seen includes everything the task printed. It sleeps on file
// events, not a busy poll.
func (s *Store) rounds(id string) output.Rounds {
	return func(ctx context.Context, round func(running bool) (bool, error)) error {
		return s.watchRecords(ctx, []string{id}, true, func(rs []*record) (bool, error) {
			return round(rs[0].Running())
		})
	}
}
