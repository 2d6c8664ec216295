package tasks

import (
	"context"
	"os"
	"testing"
	"time"
)

// A stop signals an adopted command and records its request in one locked
// step; the prompt hook that reports the command's end may run before that
// step is written. Its verdict must wait for the step and see the stop:
// the SIGINT is why the command exited 130.
func TestFinishAdoptedSeesAStopSignalledUnderTheLock(t *testing.T) {
	s := newTestStore(t)
	r := saveRunning(t, s, "abcd0001", time.Now().UTC())
	r.Adopted, r.OutputAcked, r.EndMarker = true, true, "qtask-end:abcd0001:x"
	if err := s.save(r); err != nil {
		t.Fatal(err)
	}
	tty, hook, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	finished := make(chan error, 1)
	_, err = s.update(r.ID, func(r *record) error {
		// Here beginStop has signalled; the command ends and its prompt
		// hook reports at once.
		go func() {
			finished <- s.FinishAdopted(context.Background(), r.ID, 130, hook, true)
			hook.Close()
		}()
		// A hook that decides without the lock prints the end marker now;
		// one that waits for the lock prints nothing until it is released.
		tty.SetReadDeadline(time.Now().Add(time.Second))
		tty.Read(make([]byte, 64))
		r.requestStop("")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
	got, err := s.load(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != StatusCancelled {
		t.Errorf("adopted command stopped by SIGINT settled %s (%q), want cancelled", got.Status, got.Error)
	}
}
