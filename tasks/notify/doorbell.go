package notify

import (
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/tasks/statefs"
)

// A reader waiting for a scope's notifications (`qtask agent inbox --wait`,
// Claude's asyncRewake hook) is woken by a doorbell: a FIFO of its own in
// the scope's waiters directory, into which whoever queues an entry writes
// one byte. The waiters have a directory of their own, beside the queue's
// entries, because every task's end lists it: a scope nobody reads holds
// one entry per finished task, and listing 563 of them was 6 % of what a
// wrapper spent on a quick task (bench/burst.sh). Not by inotify: tearing
// down an inotify watch waits for an SRCU grace period in the kernel,
// measured 8 ms (p50) to 20 ms on the 2-core machine the issue's ≤ 20 ms
// target is measured on, paid by every waiter when it exits
// (docs/BENCHMARKS.md, "inbox"). A FIFO costs a mkfifo, an open and an
// unlink. The entry is written before the bell rings, and the
// waiter makes its FIFO before it first looks, so no entry is missed; a
// slow heartbeat covers a bell that could not ring.

// doorbellPrefix names the waiters' FIFOs; queue entries end in ".json".
const doorbellPrefix = ".waiter-"

// waitersDir is where the doorbells of the scope queued in scopeDir are.
func waitersDir(scopeDir string) string { return filepath.Join(scopeDir, "waiters") }

// ringDoorbells wakes every reader waiting on the scope queued in scopeDir:
// one byte into each FIFO, never blocking (a full FIFO has been rung
// already). A FIFO nobody reads any more (its waiter died) is removed.
func ringDoorbells(scopeDir string) {
	dir := waitersDir(scopeDir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), doorbellPrefix) && e.Type() == fs.ModeNamedPipe {
			statefs.RingFIFO(filepath.Join(dir, e.Name()))
		}
	}
}

// doorbell is one waiter's FIFO.
type doorbell struct {
	path string
	f    *os.File
}

// openDoorbell makes a FIFO for this waiter on the scope queued in
// scopeDir and opens it for reading. It is opened read-write, so that it
// never reads as closed between two rings; reads block in the runtime's
// poller, and Close ends them.
func openDoorbell(scopeDir string) (*doorbell, error) {
	dir := waitersDir(scopeDir)
	if err := statefs.MkdirPrivate(dir); err != nil {
		return nil, err
	}
	var b [6]byte
	rand.Read(b[:])
	path := filepath.Join(dir, doorbellPrefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b[:]))
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return nil, &os.PathError{Op: "mkfifo", Path: path, Err: err}
	}
	f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return &doorbell{path: path, f: f}, nil
}

// listen sends on rung (without blocking: one pending ring is enough)
// each time the bell rings, until the doorbell is closed.
func (d *doorbell) listen(rung chan<- struct{}) {
	buf := make([]byte, 64)
	for {
		if _, err := d.f.Read(buf); err != nil {
			return
		}
		select {
		case rung <- struct{}{}:
		default:
		}
	}
}

// close removes the FIFO and ends listen.
func (d *doorbell) close() {
	os.Remove(d.path)
	d.f.Close()
}

// Listen makes a doorbell in each of scopes' waiters directories and
// sends on rung (without blocking: one pending ring is enough) each time
// one rings, until stop is called. A doorbell it cannot make is left out:
// the caller's slow heartbeat covers it.
func (q *Queue) Listen(scopes []string, rung chan<- struct{}) (stop func()) {
	var bells []*doorbell
	err := statefs.MkdirPrivate(q.notifyDir())
	for _, scope := range scopes {
		dir := q.ScopeDir(scope)
		if err == nil {
			err = statefs.MkdirPrivate(dir)
		}
		var bell *doorbell
		if err == nil {
			bell, err = openDoorbell(dir)
		}
		if err != nil {
			break
		}
		bells = append(bells, bell)
		go bell.listen(rung)
	}
	return func() {
		for _, bell := range bells {
			bell.close()
		}
	}
}

// SweepDoorbells removes the doorbells of waiters that were killed, once
// older than age at now (see statefs.SweepFIFOs): ringing a scope removes
// those too, but a scope may never be rung again.
func (q *Queue) SweepDoorbells(now time.Time, age time.Duration) {
	scopes, _ := q.Dirs()
	var dirs []string
	for _, scope := range scopes {
		// The scope's own directory too: qtask before 2026-11-26 kept
		// doorbells there, and a waiter killed then left one.
		dirs = append(dirs, scope, waitersDir(scope))
	}
	statefs.SweepFIFOs(dirs, func(name string) bool { return strings.HasPrefix(name, doorbellPrefix) }, now, age)
}
