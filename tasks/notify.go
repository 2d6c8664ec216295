package tasks

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/tasks/capped"
)

// The notification queue: every task that leaves running leaves one entry,
// notify/<scope dir>/<id>.json, for whoever listens to its scope (an agent's
// hook, `qtask agent inbox`). The entry holds only the id, the scope and the
// settle order; what a notification says is read from the task's record when
// it is delivered, so the entry can never disagree with the record.
//
// Exactly once, without a daemon:
//   - settling writes the entry (synced to disk) before the record, both in
//     the one locked step that ends the task. A crash after the entry and
//     before the record leaves an entry for a task still running; readers
//     leave such an entry alone, and when the task is settled later (by
//     reconcile) the entry is written again under the same name: one entry,
//     never two, never none.
//   - a reader claims the entries it returns under the same lock, and
//     removes them only once it has delivered them (notify_claim.go), so
//     two readers racing, or a hook fired twice, never both get one, and a
//     reader that fails to deliver, or dies, loses none.

// notifyDir holds one directory per scope with pending notifications.
func (s *Store) notifyDir() string { return filepath.Join(s.dir, "notify") }

// scopeDir is the directory of scope's pending notifications. Scopes are
// free text (a pane id, an agent's session id, whatever $QTASK_SCOPE says),
// so the directory is named by a hash of it, never by the text itself.
func (s *Store) scopeDir(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return filepath.Join(s.notifyDir(), hex.EncodeToString(sum[:16]))
}

// isScopeDirName reports whether name could be a scope's directory name.
func isScopeDirName(name string) bool {
	b, err := hex.DecodeString(name)
	return err == nil && len(b) == 16
}

// notice is a queue entry as it sits on disk.
type notice struct {
	ID    string `json:"id"`
	Scope string `json:"scope"`
	// Seq orders notifications as their tasks settled: the end time, in
	// nanoseconds, taken under the state lock that serializes settles.
	Seq int64 `json:"seq"`
	// Event, on a monitor's event (entry <id>-<count>.json), is what the
	// record cannot say: the line, and how many events came before.
	Event *Event `json:"event,omitempty"`
}

// Event is one monitor event: the Count-th event of its monitor, and the
// output line that made it.
type Event struct {
	Count int    `json:"count"`
	Line  string `json:"line"`
}

// queueEvent writes the Count-th event of monitor r, for a caller holding
// the lock under which it counted it. Events are not synced: unlike an
// end, an event lost in a crash leaves no task unaccounted for, and an
// fsync per line would cost the latency events exist to avoid.
func (s *Store) queueEvent(r *record, ev Event, seq int64) error {
	dir := s.scopeDir(r.Scope)
	if err := mkdirPrivate(s.notifyDir()); err != nil {
		return err
	}
	if err := mkdirPrivate(dir); err != nil {
		return err
	}
	data, err := json.Marshal(notice{ID: r.ID, Scope: r.Scope, Seq: seq, Event: &ev})
	if err != nil {
		return fmt.Errorf("encode event of %s: %w", r.ID, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, r.ID+"-"+strconv.Itoa(ev.Count)+".json"), append(data, '\n')); err != nil {
		return err
	}
	ringDoorbells(dir)
	return nil
}

// queueNotification writes r's notification, for a caller holding the lock
// that has just ended r and has not yet saved it. The entry is synced before
// the caller renames the record into place (see the note at the top).
func (s *Store) queueNotification(r *record) error {
	dir := s.scopeDir(r.Scope)
	if err := mkdirPrivate(s.notifyDir()); err != nil {
		return err
	}
	if err := mkdirPrivate(dir); err != nil {
		return err
	}
	data, err := json.Marshal(notice{ID: r.ID, Scope: r.Scope, Seq: r.EndedAt.UnixNano()})
	if err != nil {
		return fmt.Errorf("encode notification of %s: %w", r.ID, err)
	}
	if err := writeFileSynced(filepath.Join(dir, r.ID+".json"), append(data, '\n')); err != nil {
		return err
	}
	ringDoorbells(dir)
	return nil
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
		if processAlive(r.WaiterPID) {
			return true, nil
		}
		r.CallerGone = true
	}
	return true, s.queueNotification(r)
}

// mkdirPrivate creates dir 0700 unless it exists as a real directory.
func mkdirPrivate(dir string) error {
	return mkdirPrivateAt(unix.AT_FDCWD, dir, dir)
}

// writeFileSynced is writeFileAtomic with the data and the directory entry
// on disk before it returns: a notification must survive a crash that the
// record it precedes may not.
func writeFileSynced(path string, data []byte) error {
	return writeFileReplacing(path, data, true)
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

// Notifications returns the pending notifications of scopes (an agent
// session's hook reads its session's scope and the pane's, see
// docs/AGENTS.md) in settle order and, unless opts.Peek, claims them: no
// other reader gets them while the caller delivers them, and the caller
// must Commit or Release the delivery (see notify_claim.go). With nothing
// pending it costs one directory read per scope, and one of the claims,
// and takes no lock, since it runs on every prompt and tool call of an
// agent.
func (s *Store) Notifications(scopes []string, opts NotifyOptions) (*Delivery, error) {
	abandoned, err := s.abandonedClaims()
	if err != nil {
		return nil, err
	}
	pending := len(abandoned) > 0
	for _, scope := range scopes {
		names, err := pendingNames(s.scopeDir(scope))
		if err != nil {
			return nil, err
		}
		pending = pending || len(names) > 0
	}
	if !pending {
		return &Delivery{s: s}, nil
	}
	unlock, err := s.lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if err := s.returnAbandonedClaims(); err != nil {
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
			return compareInt64(a.n.Seq, b.n.Seq)
		}
		return strings.Compare(a.n.ID, b.n.ID)
	})
	if opts.Peek {
		return &Delivery{s: s, List: notificationsOf(list, opts)}, nil
	}
	return s.claim(list, opts)
}

// notificationsOf makes the notifications of the entries of list.
func notificationsOf(list []pendingNotice, opts NotifyOptions) []*Notification {
	out := make([]*Notification, 0, len(list))
	for _, p := range list {
		if p.n.Event != nil {
			out = append(out, &Notification{Task: p.r.atEvent(*p.n.Event), Event: p.n.Event})
			continue
		}
		tail, cut, err := lastBytes(p.r.OutputPath, opts.TailBytes)
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

// lastBytes reads up to the last n bytes of the file at path, and whether
// the file held more.
func lastBytes(path string, n int) ([]byte, bool, error) {
	f, err := capped.OpenRead(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, false, err
	}
	start := max(size-int64(n), 0)
	buf := make([]byte, size-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return nil, false, fmt.Errorf("read output: %w", err)
	}
	return buf, start > 0, nil
}

// WaitNotifications is Notifications that, when nothing is pending, blocks
// until something is or ctx is done (then it returns ctx's error). It
// sleeps on a doorbell in each scope's waiters directory (see doorbell.go),
// not on a timer; a slow heartbeat covers a bell that could not ring.
func (s *Store) WaitNotifications(ctx context.Context, scopes []string, opts NotifyOptions) (*Delivery, error) {
	rung := make(chan struct{}, 1)
	err := mkdirPrivate(s.notifyDir())
	for _, scope := range scopes {
		dir := s.scopeDir(scope)
		if err == nil {
			err = mkdirPrivate(dir)
		}
		var bell *doorbell
		if err == nil {
			bell, err = openDoorbell(dir)
		}
		if err != nil {
			break // the heartbeat will do
		}
		defer bell.close()
		go bell.listen(rung)
	}
	tick := time.NewTicker(slowPoll)
	defer tick.Stop()
	for {
		d, err := s.Notifications(scopes, opts)
		if err != nil || len(d.List) > 0 {
			return d, err
		}
		select {
		case <-ctx.Done():
			return &Delivery{s: s}, ctx.Err()
		case <-rung:
		case <-tick.C:
		}
	}
}

// RunningIn lists the ids of scope's running tasks (reconciled first, so a
// task whose process vanished is not waited for).
func (s *Store) RunningIn(scope string) ([]string, error) {
	list, _, err := s.List(Filter{Status: StatusRunning, Scope: scope})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, t := range list {
		ids[i] = t.ID
	}
	return ids, nil
}
