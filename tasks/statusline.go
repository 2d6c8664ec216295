package tasks

import (
	"time"

	"github.com/qtask/qtask/tasks/statusline"
	"github.com/qtask/qtask/tmux"
)

// The status line (package statusline) counts running tasks and failed
// background tasks nobody has looked at yet, and tells a session's clients
// when a task it started ends. The store decides, from the record, when a
// task counts and who is told, and changes the counts in the same steps
// that change the record; statusline keeps the markers, pushes the segment
// and shows the message.

// statusLine is the store's status segment, reached through the state
// directory the store checked and holds open.
func (s *Store) statusLine() statusline.Line { return statusline.New(s.root) }

// Counts reads the status segment's counts.
func (s *Store) Counts() (statusline.Counts, error) { return s.statusLine().Counts() }

// countEnd moves a task that has just ended out of the running count and,
// if it failed in the background (nobody watched it fail), into the unseen
// count. The caller holds the lock.
func (s *Store) countEnd(r *record) {
	s.statusLine().End(r.ID, r.Status == StatusFailed && r.Background)
}

// MarkSeen records that someone looked at the task (its status, its log,
// its pane): a failure seen is no longer counted on the status line.
func (s *Store) MarkSeen(t *Task) error {
	line := s.statusLine()
	if !line.Unseen(t.ID) {
		return nil // not counted: nothing to change, no tmux call
	}
	r, err := s.load(t.ID)
	if err != nil {
		return err
	}
	line.See(t.ID)
	s.pushStatus(r)
	return nil
}

// pushStatus pushes the status segment in the task's status format, to the
// servers that show it and the task's own (statusline.Line.Push).
func (s *Store) pushStatus(r *record) {
	if r.StatusFormat == "" {
		return
	}
	var own []tmux.Server
	if server, err := r.server(); err == nil {
		own = append(own, server)
	}
	s.statusLine().Push(r.StatusFormat, own...)
}

// RefreshStatus sets the status segment on server from the counts as they
// are, for the plugin's load: always, whatever the last push set. From then
// on every push goes to server too, while it runs.
func (s *Store) RefreshStatus(server tmux.Server, format string) error {
	return s.statusLine().Refresh(server, format)
}

// tellClients tells the clients of the session a background task was
// started from that it ended (statusline.TellEnd); nothing for a
// foreground task (its caller was watching), a stop (whoever stopped it
// knows) or a task started outside tmux.
func tellClients(r *record) {
	if !r.Background || r.CallerPane == "" || r.Status == StatusCancelled {
		return
	}
	server, err := r.server()
	if err != nil {
		return
	}
	statusline.TellEnd(server, tmux.PaneID(r.CallerPane), statusline.Ended{
		ID:        r.ID,
		Label:     r.Label(),
		Completed: r.Status == StatusCompleted,
		ExitCode:  r.ExitCode,
		Runtime:   r.Runtime(time.Now()),
	})
}

// tellEvent shows monitor r's event line to the clients of the session a
// background monitor was started from (statusline.TellEvent, which shows
// it only when the plugin's option asks for events); nothing for a
// foreground monitor or one started outside tmux.
func tellEvent(r *record, line string) {
	if !r.Background || r.CallerPane == "" {
		return
	}
	server, err := r.server()
	if err != nil {
		return
	}
	statusline.TellEvent(server, tmux.PaneID(r.CallerPane), r.Label(), line)
}

// startPushDelay is how long a task runs before the wrapper pushes the
// status segment for it. Agents and scripts start many commands that end
// within it; each such task costs one push (its end's) instead of two. A
// person does not see a count a fifth of a second late.
const startPushDelay = 200 * time.Millisecond

// announceStart updates the status segment for a task just started (the
// wrapper, once its command has run for startPushDelay; Adopt).
func (s *Store) announceStart(r *record) { s.pushStatus(r) }
