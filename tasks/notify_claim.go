package tasks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
func (s *Store) claimsDir() string { return filepath.Join(s.dir, "claims") }

// doneClaimPrefix names a committed claim, which is only to be removed.
const doneClaimPrefix = "done."

// claimCount numbers this process's claims: the MCP server claims for
// each tool call, and calls run concurrently.
var claimCount atomic.Uint64

// ownStart is this process's start time, the half of a claim's name that
// tells a live reader from a recycled pid.
var ownStart = sync.OnceValue(func() uint64 { return processStart(os.Getpid()) })

// Delivery is what a reader claimed from its scopes' queues. The reader
// writes List to its consumer, then calls Commit if the write succeeded
// and Release if it did not; until one of them is called (or the reader
// dies) no other reader gets these notifications.
type Delivery struct {
	// List is what to deliver, in the order the tasks ended.
	List []*Notification
	s    *Store
	// dir is the claim directory; "" when nothing is claimed (a peek, or
	// nothing pending) or once committed or released.
	dir string
}

// Commit removes the delivered notifications from the queue for good.
// Its error says they were delivered but may be delivered again.
func (d *Delivery) Commit() error {
	if d == nil || d.dir == "" {
		return nil
	}
	dir := d.dir
	d.dir = ""
	done := filepath.Join(filepath.Dir(dir), doneClaimPrefix+filepath.Base(dir))
	if err := os.Rename(dir, done); err != nil {
		return fmt.Errorf("delivered notifications stay queued, a later reader will deliver them again: %w", err)
	}
	os.RemoveAll(done) // what is left is removed by the next reader after this one exits
	return nil
}

// Release puts the notifications back in their queues, undelivered, for
// the next reader.
func (d *Delivery) Release() error {
	if d == nil || d.dir == "" {
		return nil
	}
	dir := d.dir
	d.dir = ""
	return d.s.returnClaim(dir)
}

// Deliver calls write, then commits the notifications if it succeeded and
// releases them if it failed (returning its error).
func (d *Delivery) Deliver(write func() error) error {
	if err := write(); err != nil {
		return errors.Join(err, d.Release())
	}
	return d.Commit()
}

// claim moves the entries of list into a new claim directory of this
// process and returns the delivery of those it got, for a caller holding
// the state lock. An entry that is gone (pruned meanwhile) is left out.
func (s *Store) claim(list []pendingNotice, opts NotifyOptions) (*Delivery, error) {
	d := &Delivery{s: s}
	if len(list) == 0 {
		return d, nil
	}
	if err := mkdirPrivate(s.claimsDir()); err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	name := fmt.Sprintf("%d.%d.%d", os.Getpid(), ownStart(), claimCount.Add(1))
	d.dir = filepath.Join(s.claimsDir(), name)
	if err := os.Mkdir(d.dir, dirMode); err != nil {
		return nil, fmt.Errorf("claim notifications: %w", err)
	}
	got := list[:0]
	for _, p := range list {
		scope := filepath.Base(filepath.Dir(p.path))
		err := os.Rename(p.path, filepath.Join(d.dir, scope+"."+filepath.Base(p.path)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, errors.Join(fmt.Errorf("claim notifications: %w", err), d.Release())
		}
		got = append(got, p)
	}
	d.List = notificationsOf(got, opts)
	return d, nil
}

// abandonedClaims lists the claim directories (committed or not) whose
// reader is gone.
func (s *Store) abandonedClaims() ([]string, error) {
	names, err := namesIn(s.claimsDir(), claimAbandoned)
	if err != nil {
		return nil, fmt.Errorf("read notification claims: %w", err)
	}
	return names, nil
}

// returnAbandonedClaims puts the entries of claims whose reader died back
// in their queues, and removes the committed claims such a reader left,
// for a caller holding the state lock (so two readers never both return
// one).
func (s *Store) returnAbandonedClaims() error {
	names, err := s.abandonedClaims()
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		dir := filepath.Join(s.claimsDir(), name)
		if strings.HasPrefix(name, doneClaimPrefix) {
			errs = append(errs, os.RemoveAll(dir))
			continue
		}
		errs = append(errs, s.returnClaim(dir))
	}
	return errors.Join(errs...)
}

// claimAbandoned reports whether name is a claim directory whose reader,
// the process its pid and start time name, is gone.
func claimAbandoned(name string) bool {
	f := strings.Split(strings.TrimPrefix(name, doneClaimPrefix), ".")
	if len(f) != 3 {
		return false
	}
	pid, err := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err != nil || err2 != nil || pid <= 0 {
		return false
	}
	return !sameProcess(pid, start)
}

// returnClaim moves the entries of the claim directory dir back to their
// queues and removes it. A name that is no claimed entry is removed.
func (s *Store) returnClaim(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("return claimed notifications: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		scope, entry, _ := strings.Cut(e.Name(), ".")
		if id, _ := entryID(entry); id == "" || !e.Type().IsRegular() || !isScopeDirName(scope) {
			errs = append(errs, os.RemoveAll(path))
			continue
		}
		queue := filepath.Join(s.notifyDir(), scope)
		if err := mkdirPrivate(s.notifyDir()); err != nil {
			errs = append(errs, err)
			continue
		}
		if err := mkdirPrivate(queue); err != nil {
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
