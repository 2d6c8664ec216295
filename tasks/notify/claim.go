package notify

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/qtask/qtask/tasks/statefs"
)

// Claims: a notification leaves its queue only once it was delivered.
//
// A reader does not remove what it reads. Under the state lock it renames
// each entry into a claim directory of its own, claims/<pid>.<start>.<n>
// (its pid, its /proc start time, and a count for a process that claims
// more than once, as the MCP server does for each tool call): a rename is
// atomic, so of readers racing for an entry exactly one gets it. The
// reader writes what it claimed to its consumer and only then commits, by
// renaming the claim directory to done.<pid>.<start>.<n>, one rename for
// the whole batch whatever its scopes, and removing that. A write that
// fails releases the claim: its entries go back to their queues. A reader
// that dies holding a claim (killed, SIGPIPE, a crash) leaves its
// directory behind; the next reader, of any scope, finds that the process
// its name gives is gone, or that the pid now belongs to a process that
// started at another time, and returns its entries to their queues before
// it reads.
//
// So every notification is delivered at least once, and exactly once
// unless a reader dies after its write completed and before the rename
// that commits it (the next system call, unless the reader is preempted
// in between), after which the next reader delivers it again. (A reader cannot close that window: it cannot
// both write and forget in one step. Dying before the write completed
// redelivers what the consumer got only part of; that is no duplicate.)

// claimsDir holds the claim directories of readers delivering now, and
// those that died delivering.
func (q *Queue) claimsDir() string { return filepath.Join(q.dir, "claims") }

// doneClaimPrefix names a committed claim, which is only to be removed.
const doneClaimPrefix = "done."

// claimCount numbers this process's claims: the MCP server claims for
// each tool call, and calls run concurrently.
var claimCount atomic.Uint64

// Claim is what a reader claimed from its scopes' queues: no other reader
// gets these entries until the reader calls Commit (the delivery
// succeeded) or Release (it did not), or dies. A nil Claim holds nothing.
type Claim struct {
	q *Queue
	// dir is the claim directory; "" once committed or released.
	dir string
}

// Commit removes the delivered entries from the queue for good. Its error
// says they were delivered but may be delivered again.
func (c *Claim) Commit() error {
	if c == nil || c.dir == "" {
		return nil
	}
	dir := c.dir
	c.dir = ""
	done := filepath.Join(filepath.Dir(dir), doneClaimPrefix+filepath.Base(dir))
	if err := os.Rename(dir, done); err != nil {
		return fmt.Errorf("delivered notifications stay queued, a later reader will deliver them again: %w", err)
	}
	os.RemoveAll(done) // what is left is removed by the next reader after this one exits
	return nil
}

// Release puts the entries back in their queues, undelivered, for the
// next reader.
func (c *Claim) Release() error {
	if c == nil || c.dir == "" {
		return nil
	}
	dir := c.dir
	c.dir = ""
	return c.q.returnClaim(dir)
}

// Claim moves list's entries into a new claim directory of this process,
// for a caller holding the state lock, and returns the claim and the
// entries it got, in list's order. An entry that is gone (pruned
// meanwhile) is left out. An empty list claims nothing (a nil Claim).
func (q *Queue) Claim(list []Entry) (*Claim, []Entry, error) {
	if len(list) == 0 {
		return nil, nil, nil
	}
	if err := statefs.MkdirPrivate(q.claimsDir()); err != nil {
		return nil, nil, fmt.Errorf("claim notifications: %w", err)
	}
	name := fmt.Sprintf("%d.%d.%d", os.Getpid(), q.ownStart(), claimCount.Add(1))
	c := &Claim{q: q, dir: filepath.Join(q.claimsDir(), name)}
	if err := os.Mkdir(c.dir, statefs.DirMode); err != nil {
		return nil, nil, fmt.Errorf("claim notifications: %w", err)
	}
	got := list[:0:0]
	for _, e := range list {
		scope := filepath.Base(filepath.Dir(e.path))
		err := os.Rename(e.path, filepath.Join(c.dir, scope+"."+filepath.Base(e.path)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, nil, errors.Join(fmt.Errorf("claim notifications: %w", err), c.Release())
		}
		got = append(got, e)
	}
	return c, got, nil
}

// abandonedClaims lists the claim directories (committed or not) whose
// reader is gone.
func (q *Queue) abandonedClaims() ([]string, error) {
	names, err := statefs.Names(q.claimsDir(), q.claimAbandoned)
	if err != nil {
		return nil, fmt.Errorf("read notification claims: %w", err)
	}
	return names, nil
}

// ReturnAbandoned puts the entries of claims whose reader died back in
// their queues, and removes the committed claims such a reader left, for
// a caller holding the state lock (so two readers never both return one).
func (q *Queue) ReturnAbandoned() error {
	names, err := q.abandonedClaims()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		dir := filepath.Join(q.claimsDir(), name)
		if strings.HasPrefix(name, doneClaimPrefix) {
			errs = append(errs, os.RemoveAll(dir))
			continue
		}
		errs = append(errs, q.returnClaim(dir))
	}
	return errors.Join(errs...)
}

// claimAbandoned reports whether name is a claim directory whose reader,
// the process its pid and start time name, is gone.
func (q *Queue) claimAbandoned(name string) bool {
	f := strings.Split(strings.TrimPrefix(name, doneClaimPrefix), ".")
	if len(f) != 3 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err != nil || err2 != nil || pid <= 0 {
		return false
	}
	return !q.procs.Same(pid, start)
}

// returnClaim moves the entries of the claim directory dir back to their
// queues and removes it. A name that is no claimed entry is removed.
func (q *Queue) returnClaim(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("return claimed notifications: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		scope, entry, _ := strings.Cut(e.Name(), ".")
		if id, _ := q.entryID(entry); id == "" || !e.Type().IsRegular() || !isScopeDirName(scope) {
			errs = append(errs, os.RemoveAll(path))
			continue
		}
		queue := filepath.Join(q.notifyDir(), scope)
		if err := statefs.MkdirPrivate(q.notifyDir()); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := statefs.MkdirPrivate(queue); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := os.Rename(path, filepath.Join(queue, entry)); err != nil {
			errs = append(errs, fmt.Errorf("return a claimed notification: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("return claimed notifications: %w", err)
	}
	return nil
}
