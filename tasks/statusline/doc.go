// Package statusline is what tmux's status line shows of qtask: the status
// segment (the counts of tasks running and of failed background tasks
// nobody has looked at, the format that renders them, the push of the
// rendered segment to every tmux server that shows it), and the one-line
// message, or bell, that tells a session's clients a task they started
// ended (or, when the plugin's option asks, that a monitor saw an event).
//
// It must cost next to nothing: tmux may run `qtask status-line` every
// second, and every start and end of a task updates it. So the counts are
// not derived from the records: each counted task has an empty marker
// file, counts/running/ID or counts/unseen/ID, which the caller creates
// and removes in the same steps that change the task's record, and a count
// is one read of a small directory.
//
// It does not know what a task is, decide when a task counts or whose
// clients hear of its end (its caller, package tasks, does, from the
// record), lock the state, or notify agents. It reaches the state
// directory only through the statefs.Root the store checked and holds
// open, which keeps the rules for what is made there.
package statusline
