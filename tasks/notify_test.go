package tasks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/retention"
	"github.com/qtask/qtask/tasks/statefs"
)

// saveRunningIn stores a running task of scope with some output.
func saveRunningIn(t *testing.T, s *Store, id, scope, output string) {
	t.Helper()
	r := saveRunning(t, s, id, time.Now().UTC())
	r.Scope = scope
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.outputPath(id), []byte(output), fileMode); err != nil {
		t.Fatal(err)
	}
}

func settleOrFail(t *testing.T, s *Store, id string, code int) {
	t.Helper()
	if _, changed, err := s.settle(context.Background(), id, codeOutcome(code)); err != nil || !changed {
		t.Fatalf("settle %s: changed=%v err=%v", id, changed, err)
	}
}

// deliver claims the scopes' notifications and commits them, as a reader
// whose write succeeded.
func deliver(s *Store, scopes []string, opts NotifyOptions) ([]*Notification, error) {
	d, err := s.Notifications(context.Background(), scopes, opts)
	if err != nil {
		return nil, err
	}
	return d.List, d.Commit()
}

// waitDeliver is deliver that waits (WaitNotifications).
func waitDeliver(ctx context.Context, s *Store, scopes []string, opts NotifyOptions) ([]*Notification, error) {
	d, err := s.WaitNotifications(ctx, scopes, opts)
	if err != nil {
		return nil, err
	}
	return d.List, d.Commit()
}

func consume(t *testing.T, s *Store, scope string) []string {
	t.Helper()
	list, err := deliver(s, []string{scope}, NotifyOptions{TailBytes: 8 << 10})
	if err != nil {
		t.Fatalf("Notifications(%q): %v", scope, err)
	}
	var ids []string
	for _, n := range list {
		ids = append(ids, n.Task.ID)
	}
	return ids
}

func TestSettleQueuesExactlyOneNotification(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "%7", "building\ndone\n")
	settleOrFail(t, s, "abcd0001", 2)
	// A late second settle (a reader noticing the same end) queues nothing.
	if _, changed, err := s.settle(context.Background(), "abcd0001", codeOutcome(0)); err != nil || changed {
		t.Fatalf("late settle: changed=%v err=%v", changed, err)
	}
	list, err := deliver(s, []string{"%7"}, NotifyOptions{TailBytes: 5})
	if err != nil || len(list) != 1 {
		t.Fatalf("the scope's agent got %d notifications (%v) for one ended task, want 1", len(list), err)
	}
	n := list[0]
	if n.Task.ID != "abcd0001" || n.Task.Status != StatusFailed || n.Task.ExitCode == nil || *n.Task.ExitCode != 2 {
		t.Errorf("notification says task %s %s exit %s; want abcd0001 failed exit 2", n.Task.ID, n.Task.Status, fmtCode(n.Task.ExitCode))
	}
	if string(n.Tail) != "done\n" || !n.TailCut {
		t.Errorf("tail %q cut=%v; want the last 5 bytes %q, cut", n.Tail, n.TailCut, "done\n")
	}
	if again := consume(t, s, "%7"); len(again) != 0 {
		t.Errorf("a second read got %q again: a notification delivered twice", again)
	}
}

func TestNotificationsStayInTheirScopeInSettleOrder(t *testing.T) {
	s := newTestStore(t)
	for _, id := range []string{"abcd0001", "abcd0002", "abcd0003", "abcd0004"} {
		scope := "A"
		if id == "abcd0002" {
			scope = "B"
		}
		saveRunningIn(t, s, id, scope, "")
	}
	for _, id := range []string{"abcd0004", "abcd0002", "abcd0001", "abcd0003"} {
		settleOrFail(t, s, id, 0)
	}
	if got, want := consume(t, s, "A"), []string{"abcd0004", "abcd0001", "abcd0003"}; !slices.Equal(got, want) {
		t.Errorf("scope A heard %q, want %q (its own, in the order they ended)", got, want)
	}
	if got := consume(t, s, "B"); !slices.Equal(got, []string{"abcd0002"}) {
		t.Errorf("scope B heard %q, want only its own abcd0002", got)
	}
	if got := consume(t, s, "default"); len(got) != 0 {
		t.Errorf("scope default heard %q, want nothing", got)
	}
}

func TestPeekLeavesNotifications(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "A", "")
	settleOrFail(t, s, "abcd0001", 0)
	for range 2 {
		if d, err := s.Notifications(context.Background(), []string{"A"}, NotifyOptions{Peek: true}); err != nil || len(d.List) != 1 {
			t.Fatalf("peek = %v, %v; want the one notification, left in place", d, err)
		}
	}
	if got := consume(t, s, "A"); len(got) != 1 {
		t.Errorf("after peeking, a read got %q; want the notification", got)
	}
}

// A crash after the notification was written and before the record: the
// task is still running on disk. Nobody hears of it, and when it is settled
// later the scope hears exactly once.
func TestCrashBetweenNotificationAndRecord(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "A", "")
	r, err := s.load("abcd0001")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.endAndNotify(r, codeOutcome(0)); err != nil { // not saved: the crash
		t.Fatal(err)
	}
	if got := consume(t, s, "A"); len(got) != 0 {
		t.Fatalf("a task still running on disk was announced as ended: %q", got)
	}
	settleOrFail(t, s, "abcd0001", 1)
	list, err := deliver(s, []string{"A"}, NotifyOptions{})
	if err != nil || len(list) != 1 || list[0].Task.Status != StatusFailed {
		t.Fatalf("after the real settle: %d notifications (%v); want exactly one, failed", len(list), err)
	}
}

// TestRacingReadersConsumeEachNotificationOnce: 12 readers race for 80
// notifications while they are settled, and every third delivery fails
// its write (and puts what it claimed back): every notification is
// delivered, by exactly one successful reader.
func TestRacingReadersConsumeEachNotificationOnce(t *testing.T) {
	s := newTestStore(t)
	const n = 80
	for i := range n {
		saveRunningIn(t, s, fmt.Sprintf("abcd%04d", i), "A", "")
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	// Cancelled when every notification has been delivered, or too late.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for reader := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for try := 0; ctx.Err() == nil; try++ {
				d, err := s.WaitNotifications(ctx, []string{"A"}, NotifyOptions{})
				if ctx.Err() != nil {
					d.Release()
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				if (reader+try)%3 == 0 {
					err := d.Deliver(func() error { return errors.New("the write failed") })
					if err == nil || err.Error() != "the write failed" {
						t.Errorf("a failed delivery returned %v", err)
					}
					continue
				}
				if err := d.Commit(); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, x := range d.List {
					seen[x.Task.ID]++
				}
				if len(seen) == n {
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		settleOrFail(t, s, fmt.Sprintf("abcd%04d", i), 0)
	}
	wg.Wait()
	if len(seen) != n {
		t.Errorf("readers saw %d of %d notifications", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("notification of %s delivered %d times", id, c)
		}
	}
}

func TestWaitNotificationsWakesOnSettle(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "A", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan []*Notification, 1)
	go func() {
		list, err := waitDeliver(ctx, s, []string{"A"}, NotifyOptions{})
		if err != nil {
			t.Error(err)
		}
		got <- list
	}()
	settleOrFail(t, s, "abcd0001", 0)
	if list := <-got; len(list) != 1 {
		t.Errorf("the waiting reader got %d notifications, want 1", len(list))
	}
	short, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if list, err := waitDeliver(short, s, []string{"A"}, NotifyOptions{}); err == nil || len(list) != 0 {
		t.Errorf("waiting with nothing pending returned %d notifications, err %v; want the context's deadline", len(list), err)
	}
}

func TestPruneRemovesTheTasksNotifications(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "A", "")
	saveRunningIn(t, s, "abcd0002", "A", "")
	settleOrFail(t, s, "abcd0001", 0)
	settleOrFail(t, s, "abcd0002", 0)
	r, err := s.load("abcd0001")
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	r.EndedAt = &old
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Prune(context.Background(), PruneOptions{Rule: retention.Rule{Keep: 1}}); err != nil {
		t.Fatal(err)
	}
	assertOnlyEntries(t, s.queue.ScopeDir("A"), "abcd0002.json")
	if got := consume(t, s, "A"); !slices.Equal(got, []string{"abcd0002"}) {
		t.Errorf("after pruning abcd0001 its scope heard %q, want only abcd0002", got)
	}
	if _, err := os.Stat(filepath.Dir(s.queue.ScopeDir("A"))); err != nil {
		t.Errorf("prune removed the queue directory: %v", err)
	}
}

// A foreground task's end goes to the `qtask run` waiting on it; only when
// that caller is gone (or the task was sent to the background, or the
// caller has nobody left to report to) is the scope notified, and the
// notification says whether the task outlived its caller.
func TestForegroundEndGoesToItsWaiter(t *testing.T) {
	s := newTestStore(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id                   string
		waiter               int
		background           bool
		then                 func(id string) error // before it ends
		notified, callerGone bool
	}{
		{"abcd0001", os.Getpid(), false, nil, false, false}, // attended: the caller prints it
		{"abcd0002", os.Getpid(), true, nil, true, false},   // promoted: the caller was released
		{"abcd0003", dead.Process.Pid, false, nil, true, true},
		{"abcd0004", 0, false, nil, true, false}, // started with --bg
		// The caller waits, but its agent is gone.
		{"abcd0005", os.Getpid(), false, func(id string) error { return s.OutliveCaller(context.Background(), id) }, true, true},
		// The caller lets go as its agent ends.
		{"abcd0006", os.Getpid(), false, func(id string) error {
			_, err := s.Release(context.Background(), id, "qtask")
			return err
		}, true, true},
	} {
		saveRunningIn(t, s, c.id, "F", "")
		r, err := s.load(c.id)
		if err != nil {
			t.Fatal(err)
		}
		r.WaiterPID, r.Background = c.waiter, c.background
		if err := s.save(r); err != nil {
			t.Fatal(err)
		}
		if c.then != nil {
			if err := c.then(c.id); err != nil {
				t.Fatal(err)
			}
		}
		settleOrFail(t, s, c.id, 0)
		list, err := deliver(s, []string{"F"}, NotifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 1 {
			if c.notified {
				t.Errorf("task %s (waiter %d, background %v): %d notifications, want one", c.id, c.waiter, c.background, len(list))
			}
			continue
		}
		if !c.notified || list[0].Task.CallerGone != c.callerGone {
			t.Errorf("task %s (waiter %d, background %v): notified, caller_gone %v; want notified=%v, caller_gone %v",
				c.id, c.waiter, c.background, list[0].Task.CallerGone, c.notified, c.callerGone)
		}
	}
}

// A damaged queue entry or record never blocks the scope's other
// notifications, and a damaged entry is still delivered from its record.
func TestDamagedEntriesDoNotBlockTheQueue(t *testing.T) {
	s := newTestStore(t)
	for _, id := range []string{"abcd0001", "abcd0002", "abcd0003"} {
		saveRunningIn(t, s, id, "D", "")
		settleOrFail(t, s, id, 0)
	}
	if err := os.WriteFile(filepath.Join(s.queue.ScopeDir("D"), "abcd0002.json"), []byte("{garbage"), fileMode); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.recordPath("abcd0003"), []byte("{"), fileMode); err != nil {
		t.Fatal(err)
	}
	if got := consume(t, s, "D"); !slices.Equal(got, []string{"abcd0001", "abcd0002"}) {
		t.Errorf("with a damaged entry and a damaged record the scope heard %q, want abcd0001 and abcd0002", got)
	}
	assertOnlyEntries(t, s.queue.ScopeDir("D"), "abcd0003.json")
}

// An output file that cannot be read (here a FIFO planted in its place)
// leaves the notification without a tail, marked cut; it never blocks it.
func TestUnreadableOutputStillNotifies(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "U", "")
	settleOrFail(t, s, "abcd0001", 0)
	os.Remove(s.outputPath("abcd0001"))
	if err := syscall.Mkfifo(s.outputPath("abcd0001"), fileMode); err != nil {
		t.Fatal(err)
	}
	list, err := deliver(s, []string{"U"}, NotifyOptions{TailBytes: 100})
	if err != nil || len(list) != 1 || len(list[0].Tail) != 0 || !list[0].TailCut {
		t.Fatalf("notification with a FIFO for output: %d (%v); want one, no tail, marked cut", len(list), err)
	}
}

// TestWaitNotificationsRingsItsDoorbell: a waiter is woken by the doorbell
// the queueing rings, long before the heartbeat (a second); it waits on
// every scope it was given; it leaves no FIFO behind; and a FIFO whose
// waiter died is cleared by the next ring instead of blocking it.
func TestWaitNotificationsRingsItsDoorbell(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0002", "B", "")
	dead := filepath.Join(filepath.Join(s.queue.ScopeDir("B"), "waiters"), ".waiter-"+"1-dead")
	if err := os.MkdirAll(filepath.Join(s.queue.ScopeDir("B"), "waiters"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(dead, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan time.Time, 1)
	go func() {
		list, err := waitDeliver(ctx, s, []string{"A", "B"}, NotifyOptions{})
		if err != nil || len(list) != 1 {
			t.Errorf("the waiter got %d notifications, err %v; want 1", len(list), err)
		}
		got <- time.Now()
	}()
	// The waiter is ready once its FIFOs exist.
	for bells := 0; bells < 3; {
		bells = 0
		for _, scope := range []string{"A", "B"} {
			names, _ := filepath.Glob(filepath.Join(filepath.Join(s.queue.ScopeDir(scope), "waiters"), ".waiter-"+"*"))
			bells += len(names)
		}
		if ctx.Err() != nil {
			t.Fatal("the waiter made no doorbells")
		}
		time.Sleep(time.Millisecond)
	}
	settled := time.Now()
	settleOrFail(t, s, "abcd0002", 0)
	if woke := (<-got).Sub(settled); woke >= slowPoll {
		t.Errorf("the waiter woke %v after the settle: by the heartbeat, not the doorbell", woke)
	}
	for _, scope := range []string{"A", "B"} {
		if left, _ := filepath.Glob(filepath.Join(filepath.Join(s.queue.ScopeDir(scope), "waiters"), ".waiter-"+"*")); len(left) != 0 {
			t.Errorf("left behind in scope %s: %q", scope, left)
		}
	}
}

// claimsLeft lists what is left in the claims directory.
func claimsLeft(t *testing.T, s *Store) []string {
	t.Helper()
	names, err := statefs.Names(filepath.Join(s.dir, "claims"), func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A claimed notification is no other reader's until its reader commits
// (then it is gone for good) or releases it (then the next reader gets
// it); neither leaves anything in the claims directory.
func TestClaimHoldsANotificationUntilCommitOrRelease(t *testing.T) {
	s := newTestStore(t)
	saveRunningIn(t, s, "abcd0001", "A", "")
	settleOrFail(t, s, "abcd0001", 0)
	d, err := s.Notifications(context.Background(), []string{"A"}, NotifyOptions{})
	if err != nil || len(d.List) != 1 {
		t.Fatalf("claim: %v, %v; want the one notification", d, err)
	}
	if got := consume(t, s, "A"); len(got) != 0 {
		t.Errorf("a reader got %q while another held its claim", got)
	}
	if p, err := s.Notifications(context.Background(), []string{"A"}, NotifyOptions{Peek: true}); err != nil || len(p.List) != 0 {
		t.Errorf("a peek saw %v (%v) while a reader held its claim", p, err)
	}
	if err := d.Release(); err != nil {
		t.Fatal(err)
	}
	if left := claimsLeft(t, s); len(left) != 0 {
		t.Errorf("a released claim left %q", left)
	}
	if got := consume(t, s, "A"); !slices.Equal(got, []string{"abcd0001"}) {
		t.Errorf("after the release the next reader got %q, want abcd0001", got)
	}
	if got := consume(t, s, "A"); len(got) != 0 {
		t.Errorf("after a commit a reader got %q again", got)
	}
	if left := claimsLeft(t, s); len(left) != 0 {
		t.Errorf("a committed claim left %q", left)
	}
}
