// Package notify is the notification queue of a qtask state directory:
// one entry per thing a scope must hear of (a task's end, a monitor's
// event), claimed by one reader at a time and removed only once delivered;
// the doorbells that wake readers waiting on a scope; and the notes an
// agent's hooks leave about it (idle or busy, in which tmux pane) for the
// wake that types into an idle agent's pane, and (for an agent that tells
// its commands no session) which process is the agent, so that a command
// it runs finds its session by walking up the process tree.
//
// It does not know what a task is: an entry holds an id, a scope, a settle
// order and, for a monitor's event, the event; what a notification says is
// built by the task store from the task's record when it is delivered, so
// an entry can never disagree with the record. Nor does it lock: the store
// calls it under the state lock, so that an end's entry is on disk before
// the record that ends the task is renamed into place, in one locked step
// (see Queue.Push), and readers claim under that lock too. It runs no
// tmux itself: the wake's look at an agent's pane goes through a
// CursorReader the store passes (wake.go), and the store types the line.
package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/qtask/qtask/tasks/statefs"
)

// The queue: notify/<scope dir>/<id>.json for an end, <id>-<count>.json
// for a monitor's count-th event.
//
// Exactly once, without a daemon:
//   - settling writes the entry (synced to disk) before the record, both in
//     the one locked step that ends the task. A crash after the entry and
//     before the record leaves an entry for a task still running; readers
//     leave such an entry alone, and when the task is settled later (by
//     reconcile) the entry is written again under the same name: one entry,
//     never two, never none.
//   - a reader claims the entries it returns under the same lock, and
//     removes them only once it has delivered them (claim.go), so two
//     readers racing, or a hook fired twice, never both get one, and a
//     reader that fails to deliver, or dies, loses none.

// Queue is the notification queue of one state directory.
type Queue struct {
	dir   string
	isID  func(string) bool
	procs Processes
	// ownStart is this process's start time, the half of a claim's name
	// that tells a live reader from a recycled pid; read once, when first
	// needed.
	ownStart func() uint64
}

// Processes is how the queue tells a reader that holds a claim from one
// that died: a claim is named by its reader's pid and start time; and how
// it walks up the process tree to the agent process a hook or a command
// runs under (agentproc.go).
type Processes interface {
	// Start is pid's start time, 0 when it cannot be read.
	Start(pid int) uint64
	// Same reports whether pid still is the live process that started
	// at start.
	Same(pid int, start uint64) bool
	// Parent is pid's parent and pid's own start time.
	Parent(pid int) (ppid int, start uint64, err error)
	// Environ is pid's environment, its entries NUL-separated.
	Environ(pid int) ([]byte, error)
}

// New is the queue kept under the state directory dir. isID tells a task
// id from any other text: entries are named by ids, and a name that holds
// none is no entry.
func New(dir string, isID func(string) bool, procs Processes) *Queue {
	return &Queue{dir: dir, isID: isID, procs: procs,
		ownStart: sync.OnceValue(func() uint64 { return procs.Start(os.Getpid()) })}
}

// Notice is a queue entry.
type Notice struct {
	ID    string `json:"id"`
	Scope string `json:"scope"`
	// Seq orders notifications as their tasks settled: the end time, in
	// nanoseconds, taken under the state lock that serializes settles.
	Seq int64 `json:"seq"`
	// Event, on a monitor's event, is what the record cannot say: the
	// line, and how many events came before.
	Event *Event `json:"event,omitempty"`
}

// Event is one monitor event: the Count-th event of its monitor, and the
// output line that made it.
type Event struct {
	Count int    `json:"count"`
	Line  string `json:"line"`
}

// notifyDir holds one directory per scope with pending notifications.
func (q *Queue) notifyDir() string { return filepath.Join(q.dir, "notify") }

// ScopeDir is the directory of scope's pending notifications. Scopes are
// free text (a pane id, an agent's session id, whatever $QTASK_SCOPE says),
// so the directory is named by a hash of it, never by the text itself.
func (q *Queue) ScopeDir(scope string) string {
	return filepath.Join(q.notifyDir(), scopeHash(scope))
}

// scopeHash names the files of scope: its queue, its agent's presence.
func scopeHash(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return hex.EncodeToString(sum[:16])
}

// isScopeDirName reports whether name could be a scope's directory name.
func isScopeDirName(name string) bool {
	b, err := hex.DecodeString(name)
	return err == nil && len(b) == 16
}

// entryName is the file name of n's entry.
func entryName(n Notice) string {
	if n.Event != nil {
		return n.ID + "-" + strconv.Itoa(n.Event.Count) + ".json"
	}
	return n.ID + ".json"
}

// Push queues n and rings its scope's doorbells, for a caller holding the
// state lock. An end's entry is synced before Push returns: the caller
// renames the task's ended record into place only after it (see the note
// at the top). An event's is not: unlike an end, an event lost in a crash
// leaves no task unaccounted for, and an fsync per line would cost the
// latency events exist to avoid.
func (q *Queue) Push(n Notice) error {
	dir := q.ScopeDir(n.Scope)
	if err := statefs.MkdirPrivate(q.notifyDir()); err != nil {
		return err
	}
	if err := statefs.MkdirPrivate(dir); err != nil {
		return err
	}
	what, write := "notification", statefs.WriteSynced
	if n.Event != nil {
		what, write = "event", statefs.WriteAtomic
	}
	data, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("encode %s of %s: %w", what, n.ID, err)
	}
	if err := write(filepath.Join(dir, entryName(n)), append(data, '\n')); err != nil {
		return err
	}
	ringDoorbells(dir)
	return nil
}

// Waiting reports whether the entry of n waits unread in its scope's
// queue.
func (q *Queue) Waiting(n Notice) bool {
	_, err := os.Lstat(filepath.Join(q.ScopeDir(n.Scope), entryName(n)))
	return err == nil
}

// Dirs lists the scopes' queue directories, for a prune that removes a
// task's entries (found by name: <id>.json, <id>-<n>.json) with its record.
func (q *Queue) Dirs() ([]string, error) {
	entries, err := os.ReadDir(q.notifyDir())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", q.notifyDir(), err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(q.notifyDir(), e.Name()))
		}
	}
	return dirs, nil
}
