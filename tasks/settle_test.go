package tasks

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks/taskid"
)

// Wait statuses as the kernel encodes them (Linux and the BSDs alike):
// a normal exit with code N is N<<8, a death by signal S is S (|0x80 when
// a core was dumped).
func exited(code int) syscall.WaitStatus             { return syscall.WaitStatus(code << 8) }
func killedBy(sig syscall.Signal) syscall.WaitStatus { return syscall.WaitStatus(sig) }

func TestExitOutcome(t *testing.T) {
	cases := []struct {
		name          string
		ws            syscall.WaitStatus
		stopRequested bool
		status        Status
		code          int
		reason        string
	}{
		{"exit 0", exited(0), false, StatusCompleted, 0, ""},
		{"exit 1", exited(1), false, StatusFailed, 1, "exited with code 1"},
		{"exit 3", exited(3), false, StatusFailed, 3, "exited with code 3"},
		{"exit 255", exited(255), false, StatusFailed, 255, "exited with code 255"},
		{"SIGKILL", killedBy(syscall.SIGKILL), false, StatusFailed, 137, "terminated by signal 9"},
		{"SIGTERM", killedBy(syscall.SIGTERM), false, StatusFailed, 143, "terminated by signal 15"},
		{"SIGSEGV with core dump", killedBy(syscall.SIGSEGV) | 0x80, false, StatusFailed, 139, "terminated by signal 11"},
		{"stop then SIGTERM", killedBy(syscall.SIGTERM), true, StatusCancelled, 143, ""},
		{"stop then SIGKILL", killedBy(syscall.SIGKILL), true, StatusCancelled, 137, ""},
		{"stop but it exited 0 anyway", exited(0), true, StatusCancelled, 0, ""},
		{"stop but it exited 2", exited(2), true, StatusCancelled, 2, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &record{}
			if c.stopRequested {
				now := time.Now()
				r.StopRequestedAt = &now
			}
			o := r.stopOutcome(exitOutcome(c.ws))
			if o.status != c.status || o.exitCode == nil || *o.exitCode != c.code || o.reason != c.reason {
				t.Errorf("task ended with wait status %#x (stop requested: %v): user sees status %q, exit code %s, reason %q; want %q, %d, %q",
					uint32(c.ws), c.stopRequested, o.status, fmtCode(o.exitCode), o.reason, c.status, c.code, c.reason)
			}
		})
	}
}

func fmtCode(p *int) string {
	if p == nil {
		return "none"
	}
	return strconv.Itoa(*p)
}

func TestLostOutcome(t *testing.T) {
	o := lostOutcome("wrapper process 123 is gone")
	if o.status != StatusFailed || o.exitCode != nil || o.reason != "lost: wrapper process 123 is gone" {
		t.Errorf("lost task: status %q, exit code %s, reason %q; want failed, none, %q",
			o.status, fmtCode(o.exitCode), o.reason, "lost: wrapper process 123 is gone")
	}
}

func newTestStore(t *testing.T, opts ...option) *Store {
	t.Helper()
	s, err := OpenStore(newStateDir(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func saveRunning(t *testing.T, s *Store, id string, started time.Time) *record {
	t.Helper()
	r := &record{Task: Task{
		ID: id, Kind: KindShell, Command: "echo " + id, Status: StatusRunning,
		StartedAt: started, OutputPath: s.outputPath(id),
	}}
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestSettleIsOneShot(t *testing.T) {
	s := newTestStore(t)
	saveRunning(t, s, "abcd0001", time.Now().UTC())

	first := exitOutcome(exited(3))
	r, changed, err := s.settle(context.Background(), "abcd0001", first)
	if err != nil || !changed {
		t.Fatalf("first settle of a running task: changed=%v err=%v, want changed=true", changed, err)
	}
	if r.Status != StatusFailed || r.ExitCode == nil || *r.ExitCode != 3 || r.EndedAt == nil {
		t.Fatalf("after settling with exit 3 the task shows status %q, exit code %s, ended %v", r.Status, fmtCode(r.ExitCode), r.EndedAt)
	}
	ended := *r.EndedAt

	// A second observer (say, a reader that noticed the pane vanish) settles too late.
	r2, changed, err := s.settle(context.Background(), "abcd0001", outcome{status: StatusCompleted, exitCode: new(int)})
	if err != nil {
		t.Fatalf("late settle: %v", err)
	}
	if changed {
		t.Errorf("late settle reported changed=true: a task left running twice")
	}
	onDisk, err := s.load("abcd0001")
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range []*record{r2, onDisk} {
		if got.Status != StatusFailed || got.ExitCode == nil || *got.ExitCode != 3 ||
			got.Error != "exited with code 3" || got.EndedAt == nil || !got.EndedAt.Equal(ended) {
			t.Errorf("a late settle rewrote the outcome: status %q, exit code %s, error %q, ended %v; want failed, 3, %q, %v",
				got.Status, fmtCode(got.ExitCode), got.Error, got.EndedAt, "exited with code 3", ended)
		}
	}
}

func TestSettleUnknownTask(t *testing.T) {
	s := newTestStore(t)
	_, changed, err := s.settle(context.Background(), "deadbeef", exitOutcome(exited(0)))
	if !errors.Is(err, taskid.ErrNotFound) || changed {
		t.Errorf("settling a task that has no record: changed=%v err=%v, want not found", changed, err)
	}
}

func TestParseStatus(t *testing.T) {
	for _, s := range []Status{StatusRunning, StatusCompleted, StatusFailed, StatusCancelled} {
		if got, err := ParseStatus(string(s)); err != nil || got != s {
			t.Errorf("ls --status %s: ParseStatus = (%q, %v), want %q", s, got, err, s)
		}
	}
	for _, s := range []string{"", "Running", "RUNNING", "done", "cancel", "canceled", " running", "failed "} {
		got, err := ParseStatus(s)
		if err == nil {
			t.Errorf("ls --status %q was accepted as %q, want an error", s, got)
			continue
		}
		if !strings.Contains(err.Error(), strconv.Quote(s)) || !strings.Contains(err.Error(), "running, completed, failed or cancelled") {
			t.Errorf("ls --status %q: error %q should name the input and the valid statuses", s, err)
		}
	}
}

func TestStatusText(t *testing.T) {
	one, zero, three, kill := 1, 0, 3, 137
	cases := []struct {
		task Task
		want string
	}{
		{Task{Status: StatusRunning}, "running"},
		{Task{Status: StatusCompleted, ExitCode: &zero}, "completed (exit 0)"},
		{Task{Status: StatusFailed, ExitCode: &three, Error: "exited with code 3"}, "failed: exited with code 3"},
		{Task{Status: StatusFailed, ExitCode: &kill, Error: "terminated by signal 9"}, "failed: terminated by signal 9"},
		{Task{Status: StatusFailed, Error: "lost: wrapper vanished"}, "failed: lost: wrapper vanished"},
		{Task{Status: StatusFailed, ExitCode: &one}, "failed"},
		{Task{Status: StatusCancelled, ExitCode: &kill}, "cancelled"},
	}
	for _, c := range cases {
		if got := c.task.StatusText(); got != c.want {
			t.Errorf("ls shows status %q for %+v, want %q", got, c.task, c.want)
		}
	}
}

func TestRuntime(t *testing.T) {
	start := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	end := start.Add(90 * time.Second)
	skewed := start.Add(-time.Second)
	cases := []struct {
		name string
		task Task
		now  time.Time
		want time.Duration
	}{
		{"running: until now", Task{StartedAt: start}, start.Add(5 * time.Minute), 5 * time.Minute},
		{"running: just started", Task{StartedAt: start}, start, 0},
		{"ended: until the end, not now", Task{StartedAt: start, EndedAt: &end}, start.Add(time.Hour), 90 * time.Second},
		{"clock stepped back while running", Task{StartedAt: start}, start.Add(-time.Minute), 0},
		{"ended before it started (clock skew)", Task{StartedAt: start, EndedAt: &skewed}, start.Add(time.Hour), 0},
	}
	for _, c := range cases {
		if got := c.task.Runtime(c.now); got != c.want {
			t.Errorf("%s: runtime %v, want %v", c.name, got, c.want)
		}
	}
}
