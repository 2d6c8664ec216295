package tasks

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/notify"
	"github.com/qtask/qtask/tasks/output"
	"github.com/qtask/qtask/tasks/procs"
	"github.com/qtask/qtask/tasks/taskid"
)

// Notifications: every task that leaves running leaves one entry in its
// scope's queue (tasks/notify), for whoever listens to that scope (an
// agent's hook, `qtask agent inbox`). The store writes the entry in the
// locked step that ends the task, before the record's rename, and readers
// take entries under the same lock; what a notification says is read
// from the task's record when it is delivered, so it can never disagree
// with the record.

// Event is one monitor event: the Count-th event of its monitor, and the
// output line that made it.
type Event = notify.Event

// newQueue is the notification queue of the state directory dir.
func newQueue(dir string) *notify.Queue {
	return notify.New(dir, taskid.Valid, queueProcs{})
}

// queueProcs is the machine's processes, as the queue asks about the
// readers holding its claims.
type queueProcs struct{}

func (queueProcs) Start(pid int) uint64            { return procs.StartTime(pid) }
func (queueProcs) Same(pid int, start uint64) bool { return procs.Same(pid, start) }

// queueEvent writes the Count-th event of monitor r, for a caller holding
// the lock under which it counted it (see notify.Queue.Push).
func (s *Store) queueEvent(r *record, ev Event, seq int64) error {
	return s.queue.Push(notify.Notice{ID: r.ID, Scope: r.Scope, Seq: seq, Event: &ev})
}

// queueNotification writes r's notification, for a caller holding the lock
// that has just ended r and has not yet saved it: the entry is synced
// before the caller renames the record into place.
func (s *Store) queueNotification(r *record) error {
	return s.queue.Push(notify.Notice{ID: r.ID, Scope: r.Scope, Seq: r.EndedAt.UnixNano()})
}

// endAndNotify ends a running record with o and queues its notification,
// for callers holding the lock; false (nothing done) if it had ended.
//
// A foreground task whose `qtask run` still waits on it is the exception:
// that caller prints the end and passes the exit code on (to a person, or
// as an agent's tool result), so a notification would tell it twice. If
// the caller is gone, nobody has heard, and the notification is queued,
// saying so (CallerGone); so it is when the caller still waits but said
// that whoever it reports to is gone (OutliveCaller).
func (s *Store) endAndNotify(r *record, o outcome) (bool, error) {
	if !r.end(o) {
		return false, nil
	}
	s.countEnd(r)
	if !r.Background && r.WaiterPID != 0 && !r.CallerGone {
		if procs.Alive(r.WaiterPID) {
			return true, nil
		}
		r.CallerGone = true
	}
	return true, s.queueNotification(r)
}

// Notification is one ended task as its scope hears about it: the task as
// it ended and the end of its output; or, with Event set, one event of a
// running monitor (Task is then the monitor as it stood at the event).
type Notification struct {
	Task  Task
	Event *Event
	// Tail is the last bytes of the output file (at most the TailBytes
	// asked for; it may begin inside a character), and TailCut says the
	// file held more before them (or could not be read).
	Tail    []byte
	TailCut bool
}

// NotifyOptions says how Notifications reads a scope's queue.
type NotifyOptions struct {
	// Peek leaves the notifications queued, claiming none; otherwise they
	// are claimed for the caller to deliver (see Delivery).
	Peek bool
	// TailBytes is how much of each output's end to read.
	TailBytes int
}

// Delivery is what a reader claimed from its scopes' queues: the
// notifications to write to its consumer, which it then commits or
// releases (see notify.Delivery).
type Delivery = notify.Delivery[*Notification]

// Notifications returns the pending notifications of scopes (an agent
// session's hook reads its session's scope and the pane's, see
// docs/AGENTS.md) in settle order and, unless opts.Peek, claims them: no
// other reader gets them while the caller delivers them, and the caller
// must Commit or Release the delivery. With nothing pending it takes no
// lock (notify.Queue.Pending), since it runs on every prompt and tool call
// of an agent.
func (s *Store) Notifications(ctx context.Context, scopes []string, opts NotifyOptions) (*Delivery, error) {
	pending, err := s.queue.Pending(scopes)
	if err != nil {
		return nil, err
	}
	if !pending {
		return &Delivery{}, nil
	}
	unlock, err := s.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.queue.ReturnAbandoned(); err != nil {
		return nil, err
	}
	var list []pendingNotice
	for _, scope := range slices.Compact(slices.Sorted(slices.Values(scopes))) {
		// Read again under the lock: another reader may have taken them.
		found, err := s.pendingIn(scope)
		if err != nil {
			return nil, err
		}
		list = append(list, found...)
	}
	slices.SortFunc(list, func(a, b pendingNotice) int {
		if a.n.Seq != b.n.Seq {
			return cmp.Compare(a.n.Seq, b.n.Seq)
		}
		return strings.Compare(a.n.ID, b.n.ID)
	})
	if opts.Peek {
		return &Delivery{List: notificationsOf(list, opts)}, nil
	}
	entries := make([]notify.Entry, len(list))
	byEntry := make(map[notify.Entry]pendingNotice, len(list))
	for i, p := range list {
		entries[i], byEntry[p.e] = p.e, p
	}
	claim, got, err := s.queue.Claim(entries)
	if err != nil {
		return nil, err
	}
	claimed := make([]pendingNotice, len(got)) // without those gone meanwhile
	for i, e := range got {
		claimed[i] = byEntry[e]
	}
	return notify.NewDelivery(notificationsOf(claimed, opts), claim), nil
}

// pendingNotice is one deliverable queue entry and its task's record.
type pendingNotice struct {
	e notify.Entry
	n notify.Notice
	r *record
}

// pendingIn reads scope's deliverable entries, for a caller holding the
// lock, and removes those whose task is gone.
func (s *Store) pendingIn(scope string) ([]pendingNotice, error) {
	entries, err := s.queue.Entries(scope)
	if err != nil {
		return nil, err
	}
	var list []pendingNotice
	for _, e := range entries {
		r, err := s.load(e.ID())
		var invalid *InvalidRecordError
		switch {
		case errors.Is(err, taskid.ErrNotFound) || err == nil && r.Scope != scope:
			e.Drop() // its task is gone (or is not the scope's): nothing to tell
			continue
		case errors.As(err, &invalid):
			continue // `ls` reports the record; the entry waits until it is fixed or pruned
		case err != nil:
			return nil, err
		case e.IsEvent():
			n, err := e.Read()
			if err != nil || n.ID != r.ID || n.Event == nil {
				e.Drop() // damaged: the line it held is lost, the count is in the record
				continue
			}
			list = append(list, pendingNotice{e, n, r})
			continue
		case r.Running():
			continue // written just before a crash; its settle will write it again
		}
		n, err := e.Read()
		if err != nil || n.ID != r.ID {
			// Damaged: the record says all there is to say.
			n = notify.Notice{ID: r.ID, Scope: r.Scope, Seq: r.EndedAt.UnixNano()}
		}
		list = append(list, pendingNotice{e, n, r})
	}
	return list, nil
}

// notificationsOf makes the notifications of the entries of list.
func notificationsOf(list []pendingNotice, opts NotifyOptions) []*Notification {
	out := make([]*Notification, 0, len(list))
	for _, p := range list {
		if p.n.Event != nil {
			out = append(out, &Notification{Task: p.r.atEvent(*p.n.Event), Event: p.n.Event})
			continue
		}
		tail, cut, err := output.File{Task: p.r.ID, Path: p.r.OutputPath}.LastBytes(opts.TailBytes)
		if err != nil {
			// The end still gets told; the output is for the reader to
			// look at (a missing file has nothing to cut, anything else
			// unreadable counts as cut).
			tail, cut = nil, !errors.Is(err, fs.ErrNotExist)
		}
		out = append(out, &Notification{Task: p.r.Task, Tail: tail, TailCut: cut})
	}
	return out
}

// WaitNotifications is Notifications that, when nothing is pending, blocks
// until something is or ctx is done (then it returns ctx's error). It
// sleeps on a doorbell in each scope's queue (notify.Queue.Listen), not on
// a timer; a slow heartbeat covers a bell that could not ring.
func (s *Store) WaitNotifications(ctx context.Context, scopes []string, opts NotifyOptions) (*Delivery, error) {
	rung := make(chan struct{}, 1)
	defer s.queue.Listen(scopes, rung)()
	tick := time.NewTicker(slowPoll)
	defer tick.Stop()
	for {
		d, err := s.Notifications(ctx, scopes, opts)
		if err != nil && ctx.Err() != nil {
			// ctx ended while the claim waited for the lock: nothing was
			// claimed, and the wait is over.
			return &Delivery{}, ctx.Err()
		}
		if err != nil || len(d.List) > 0 {
			return d, err
		}
		select {
		case <-ctx.Done():
			return &Delivery{}, ctx.Err()
		case <-rung:
		case <-tick.C:
		}
	}
}

// RunningIn lists the ids of scope's running tasks (reconciled first, so a
// task whose process vanished is not waited for).
func (s *Store) RunningIn(ctx context.Context, scope string) ([]string, error) {
	list, _, err := s.List(ctx, Filter{Status: StatusRunning, Scope: scope})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, t := range list {
		ids[i] = t.ID
	}
	return ids, nil
}
