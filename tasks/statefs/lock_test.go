package statefs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

// openTestRoot opens a fresh state directory.
func openTestRoot(t *testing.T) *Root {
	t.Helper()
	r, err := OpenRoot(newStateDir(t), Home{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLockWaitEndsWithContext(t *testing.T) {
	r := openTestRoot(t)
	release := testenv.HoldFlock(t, filepath.Join(r.Dir(), "lock"))
	cause := errors.New("interrupted by test")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 100*time.Millisecond, cause)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		unlock, err := r.Lock(ctx, "lock")
		if err == nil {
			unlock()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("Lock with a cancelled context = %v, want an error wrapping the cause %q", err, cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Lock kept waiting for a held lock after its context ended")
	}
	// The abandoned wait must not keep the lock once it gets it.
	release()
	got := make(chan error, 1)
	go func() {
		unlock, err := r.Lock(context.Background(), "lock")
		if err == nil {
			unlock()
		}
		got <- err
	}()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the lock stayed taken after an abandoned wait: every later transition would hang")
	}
}

func TestLockUncontendedIgnoresEndedContext(t *testing.T) {
	r := openTestRoot(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	unlock, err := r.Lock(ctx, "lock")
	if err != nil {
		t.Fatalf("a free lock must be taken even after the context ended (a stop's last step): %v", err)
	}
	unlock()
}

// TestLockRefusesAReplacedStateDir: once the state directory's path names
// another directory, Lock fails as replaced and creates nothing in it; with
// nothing at the path, the error also says it does not exist.
func TestLockRefusesAReplacedStateDir(t *testing.T) {
	r := openTestRoot(t)
	if err := os.Rename(r.Dir(), r.Dir()+".away"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(r.Dir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if unlock, err := r.Lock(context.Background(), "lock"); !errors.Is(err, ErrReplaced) || errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			unlock()
		}
		t.Errorf("Lock with another directory in the state directory's place: %v; want it refused as replaced", err)
	}
	if names, _ := Names(r.Dir(), func(string) bool { return true }); len(names) != 0 {
		t.Errorf("Lock created %v in the directory put in the state directory's place", names)
	}
	os.Remove(r.Dir())
	if _, err := r.Lock(context.Background(), "lock"); !errors.Is(err, ErrReplaced) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Lock with the state directory moved away: %v; want it replaced and not existing", err)
	}
}
