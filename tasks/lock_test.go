package tasks

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
)

func TestLockWaitEndsWithContext(t *testing.T) {
	s := newTestStore(t)
	release := testenv.HoldFlock(t, s.lockPath())
	cause := errors.New("interrupted by test")
	ctx, cancel := context.WithTimeoutCause(context.Background(), 100*time.Millisecond, cause)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		unlock, err := s.lock(ctx)
		if err == nil {
			unlock()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Fatalf("lock() with a cancelled context = %v, want an error wrapping the cause %q", err, cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("lock() kept waiting for a held lock after its context ended")
	}
	// The abandoned wait must not keep the lock once it gets it.
	release()
	got := make(chan error, 1)
	go func() {
		unlock, err := s.lock(context.Background())
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
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	unlock, err := s.lock(ctx)
	if err != nil {
		t.Fatalf("a free lock must be taken even after the context ended (a stop's last step): %v", err)
	}
	unlock()
}
