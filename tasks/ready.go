package tasks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/qtask/qtask/tasks/output"
)

// ReadyOutcome is how a wait for a task to be ready ended.
type ReadyOutcome int

const (
	// Ready: the gate was met.
	Ready ReadyOutcome = iota + 1
	// ReadyEnded: the task ended before the gate was met.
	ReadyEnded
	// ReadyTimedOut: the timeout passed first. The task runs on, unless
	// ReadyOptions.KillOnTimeout stopped it.
	ReadyTimedOut
)

// DefaultReadyTimeout is how long a readiness gate waits when not told: a
// dev server that needs a build first may take a minute or more, and an
// agent's tool call should still end in reasonable time.
const DefaultReadyTimeout = 2 * time.Minute

// ReadyTailLines is how many of the last lines of output a gate that was
// not met reports: why a server died is usually there.
const ReadyTailLines = 10

// ReadyOptions says what makes a task ready, and how long to wait for it.
// Exactly one of Pattern and Port is set.
type ReadyOptions struct {
	// Pattern: a line of the task's output matches it. Lines printed before
	// the wait began count: the whole output is searched.
	Pattern *regexp.Regexp
	// Port: 127.0.0.1:Port accepts a TCP connection.
	Port int
	// Timeout: how long to wait; 0 looks once (the output so far, the port
	// now); negative waits as long as it takes.
	Timeout time.Duration
	// KillOnTimeout stops the task (its owned process group, as `qtask
	// stop` does, within StopGrace) when the timeout passes; it is then
	// failed, "not ready after …".
	KillOnTimeout bool
	StopGrace     time.Duration
}

// Describe says what the gate waits for, for messages: `a line matching
// "listening"`, `127.0.0.1:8000 to accept a connection`.
func (o ReadyOptions) Describe() string {
	if o.Pattern != nil {
		return fmt.Sprintf("a line matching %q", o.Pattern.String())
	}
	return fmt.Sprintf("127.0.0.1:%d to accept a connection", o.Port)
}

// ReadyResult is the outcome of AwaitReady.
type ReadyResult struct {
	Outcome ReadyOutcome
	// Task as it stood when the wait ended (stopped, after KillOnTimeout).
	// A task may be ready and have ended since: it printed the line and
	// exited.
	Task *Task
	// Line is the output line that matched Pattern.
	Line string
	// Tail is the last ReadyTailLines lines of output, fit for a terminal,
	// when the gate was not met.
	Tail string
}

// errLineMatched stops FollowLines at the line a gate waited for.
var errLineMatched = errors.New("line matched")

// portPoll is how often a port gate tries to connect: nothing announces
// that a port opened, and a refused local connection costs microseconds.
const portPoll = 10 * time.Millisecond

// portDialTimeout bounds one connection attempt, should a packet filter
// drop it instead of refusing it.
const portDialTimeout = 500 * time.Millisecond

// AwaitReady waits until the task idOrPrefix is ready by opts, ends, or the
// timeout passes, and says which. A pattern gate reads the output as `logs
// -f` does (FollowLines), woken by file events; a port gate tries to connect,
// and reads the record, every portPoll. An error is a failure to wait (or ctx's), not an outcome.
func (s *Store) AwaitReady(ctx context.Context, idOrPrefix string, opts ReadyOptions) (*ReadyResult, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	t, err := s.Get(ctx, idOrPrefix)
	if err != nil {
		return nil, err
	}
	wctx := ctx
	if opts.Timeout >= 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	res := &ReadyResult{Outcome: ReadyEnded}
	err = s.watchGate(wctx, t, opts, res)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		res.Outcome, err = ReadyTimedOut, nil
		if opts.KillOnTimeout {
			stop := StopOptions{Grace: opts.StopGrace, Reason: fmt.Sprintf("not ready after %s", opts.Timeout)}
			err = s.stopIfRunning(ctx, t.ID, stop)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.fillReadyResult(ctx, res, t.ID); err != nil {
		return nil, err
	}
	return res, nil
}

// check refuses a gate that waits for both a line and a port, or for a
// port that cannot exist, before anything waits.
func (o ReadyOptions) check() error {
	if o.Pattern != nil && o.Port != 0 {
		return &ArgumentError{Msg: "a readiness gate waits for a line or a port, not both"}
	}
	if o.Pattern == nil {
		return CheckPort(o.Port)
	}
	return nil
}

// watchGate waits, until ctx is done, for the gate to be met (res.Outcome
// becomes Ready, with the matching line for a pattern) or the task to end
// (res is left as it was).
func (s *Store) watchGate(ctx context.Context, t *Task, opts ReadyOptions, res *ReadyResult) error {
	if opts.Pattern == nil {
		open, err := s.awaitPort(ctx, t.ID, opts.Port)
		if open {
			res.Outcome = Ready
		}
		return err
	}
	err := s.FollowLines(ctx, t, 0, func(line []byte) error {
		if !opts.Pattern.Match(line) {
			return nil
		}
		res.Outcome, res.Line = Ready, string(line)
		return errLineMatched
	})
	if errors.Is(err, errLineMatched) {
		return nil
	}
	return err
}

// fillReadyResult adds the task as it stands now to res and, when the gate
// was not met, the last lines of output, where the reason usually is.
func (s *Store) fillReadyResult(ctx context.Context, res *ReadyResult, id string) error {
	t, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	res.Task = t
	if res.Outcome != Ready {
		var b strings.Builder
		if _, err := (output.File{Task: res.Task.ID, Path: res.Task.OutputPath}).WriteTail(&b, ReadyTailLines); err != nil {
			return err
		}
		res.Tail = b.String()
	}
	return nil
}

// awaitPort reports true once 127.0.0.1:port accepts a connection, false
// once the task has ended without it, or ctx's error. It looks every
// portPoll, at the record too: nothing announces an open port, so a file
// watch for the end would add nothing but its cost (closing an inotify
// instance waits out a kernel grace period, 10–20 ms, paid on the way out).
func (s *Store) awaitPort(ctx context.Context, id string, port int) (bool, error) {
	tick := time.NewTicker(portPoll)
	defer tick.Stop()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for {
		// The status before the port: a server that opened it and then
		// died was ready, not dead.
		r, err := s.load(id)
		if err != nil {
			return false, err
		}
		r = s.reconcile(ctx, r)
		if portAccepts(addr) {
			return true, nil
		}
		if !r.Running() {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-tick.C:
		}
	}
}

// portAccepts says whether a TCP connection to addr succeeds; it is closed
// at once. It does not take the wait's context: a gate whose time is up
// still looks once.
func portAccepts(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, portDialTimeout)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// CheckPort refuses a port outside 1–65535.
func CheckPort(port int) error {
	if port < 1 || port > 65535 {
		return &ArgumentError{Msg: fmt.Sprintf("port %d is out of range: give a TCP port from 1 to 65535", port)}
	}
	return nil
}

// CheckPortFree refuses a port that accepts connections before the task
// that should open it has started: another program holds it, and a gate
// on it would be met at once, by the wrong program.
func CheckPortFree(port int) error {
	if portAccepts(net.JoinHostPort("127.0.0.1", strconv.Itoa(port))) {
		return &InputError{Msg: fmt.Sprintf("127.0.0.1:%d already accepts connections before the task starts "+
			"(another server holds it?): free the port, or gate on another", port)}
	}
	return nil
}
