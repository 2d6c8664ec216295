package tasks

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A copier waiting for its cat on a FIFO whose directory was then deleted
// (rm -rf of the state, a test's temp dir at cleanup) can never be released
// through the name: halt must give up on it instead of keeping the wrapper
// alive for ever (wrappers were seen waiting an hour after their tests).
func TestHaltGivesUpOnADeletedFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "task.pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	c := &paneCapture{fifo: fifo, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run() // blocks opening the FIFO: no writer will come
	deadline := time.Now().Add(5 * time.Second)
	for !threadWaitsForFIFOPartner() {
		if time.Now().After(deadline) {
			t.Fatal("the copier never waited on the FIFO")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.Remove(fifo); err != nil {
		t.Fatal(err)
	}
	halted := make(chan struct{})
	go func() { c.halt(); close(halted) }()
	select {
	case <-halted:
	case <-time.After(captureClosedWait + 5*time.Second):
		t.Fatal("halt still waits for a copier on a FIFO that no longer has a name")
	}
}

// threadWaitsForFIFOPartner reports whether a thread of this process is
// blocked opening a FIFO (the kernel's wait_for_partner).
func threadWaitsForFIFOPartner() bool {
	threads, _ := filepath.Glob("/proc/self/task/*/wchan")
	for _, path := range threads {
		if data, _ := os.ReadFile(path); string(data) == "wait_for_partner" {
			return true
		}
	}
	return false
}
