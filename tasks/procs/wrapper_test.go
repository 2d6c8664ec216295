package procs_test

import (
	"os"
	"testing"

	"github.com/qtask/qtask/internal/pty"
	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks/procs"
)

// HungUp tells a pane's terminal whose pane is gone (tmux closed the pty's
// master) from a live one, without waiting for the SIGHUP; a pipe whose
// writer went, which polls as hung up too, is not a closed pane.
func TestHungUpTerminal(t *testing.T) {
	master, tty, err := pty.Open(24, 80)
	if err != nil {
		testenv.Unavailable(t, "no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	if procs.HungUp(tty) {
		t.Fatal("a terminal whose master is open says it hung up")
	}
	master.Close()
	if !procs.HungUp(tty) {
		t.Fatal("a terminal whose master was closed (its pane killed) does not say it hung up")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	w.Close()
	if procs.HungUp(r) || procs.HungUp(nil) {
		t.Fatal("a pipe, or no file, taken for a hung-up terminal")
	}
}
