// Package statusline keeps qtask's tmux status segment: the counts it
// shows (tasks running, failed background tasks nobody has looked at), the
// format that renders them, and the push of the rendered segment to every
// tmux server that shows it.
//
// It must cost next to nothing: tmux may run `qtask status-line` every
// second, and every start and end of a task updates it. So the counts are
// not derived from the records: each counted task has an empty marker
// file, counts/running/ID or counts/unseen/ID, which the caller creates
// and removes in the same steps that change the task's record, and a count
// is one read of a small directory.
//
// It does not know what a task is, decide when a task counts (its caller,
// package tasks, does, from the record), lock the state, or tell anyone a
// task ended. It reaches the state directory only through Dir, which the
// store that checked that directory provides.
package statusline
