package statefs

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock takes an exclusive lock on the lock file rel, creating it (0600)
// through the open state directory. Once the lock is held the state
// directory's path must still name that directory (Check): what is done
// under the lock is written by path, and must not land in a directory put
// in its place. A wait for a lock someone holds ends with ctx (Ctrl+C,
// SIGTERM, a command's timeout), failing with context.Cause(ctx); a ctx
// that can never end (context.Background) waits as long as it takes.
func (r *Root) Lock(ctx context.Context, rel string) (unlock func(), err error) {
	f, err := r.OpenFile(rel, os.O_CREATE|os.O_RDWR)
	if err != nil {
		return nil, fmt.Errorf("open state lock: %w", err)
	}
	if err := flockContext(ctx, f); err != nil {
		return nil, err
	}
	if err := r.Check(); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}

// flockContext takes an exclusive flock on f, giving up when ctx ends; on
// failure f is closed. flock(2) cannot be cancelled, so a contended wait
// runs in a goroutine, which owns f from then on: if ctx ends first, it
// closes f once flock returns, releasing the lock it may have got. A ctx
// that can never end (context.Background) waits in place, with no goroutine.
func flockContext(ctx context.Context, f *os.File) error {
	fd := int(f.Fd())
	err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) && ctx.Done() == nil {
		err = flock(fd, syscall.LOCK_EX)
	}
	if !errors.Is(err, syscall.EWOULDBLOCK) {
		if err != nil {
			f.Close()
			return fmt.Errorf("lock state: %w", err)
		}
		return nil
	}
	done := make(chan error) // unbuffered: a send succeeds only if Lock still waits
	abandoned := make(chan struct{})
	go func() {
		err := flock(fd, syscall.LOCK_EX)
		select {
		case done <- err:
		case <-abandoned:
			f.Close()
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			f.Close()
			return fmt.Errorf("lock state: %w", err)
		}
		return nil
	case <-ctx.Done():
		close(abandoned)
		return fmt.Errorf("waiting for the state lock %s: %w", f.Name(), context.Cause(ctx))
	}
}

// flock is flock(2), retried when a signal interrupts it.
func flock(fd, how int) error {
	for {
		if err := syscall.Flock(fd, how); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
