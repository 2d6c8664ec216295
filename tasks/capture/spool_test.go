package capture

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"
)

// flakyFile takes writes into buf unless full is set; then it takes room
// bytes more (a partial write) and fails with ENOSPC.
type flakyFile struct {
	buf  bytes.Buffer
	full bool
	room int
}

func (f *flakyFile) Write(p []byte) (int, error) {
	if !f.full {
		return f.buf.Write(p)
	}
	n := min(f.room, len(p))
	f.buf.Write(p[:n])
	f.room -= n
	return n, syscall.ENOSPC
}

// retryNow makes the spool's pending retry due.
func retryNow(p *spool) { p.retryAt = time.Time{} }

func TestSpoolKeepsOrderAcrossAFullDisk(t *testing.T) {
	f := &flakyFile{}
	var losses []string
	p := newSpool(f, func(l string) { losses = append(losses, l) })
	p.Write([]byte("one\n"))
	f.full, f.room = true, 3
	p.Write([]byte("two\n"))
	p.Write([]byte("three\n"))
	if got := f.buf.String(); got != "one\ntwo" {
		t.Fatalf("while full the file holds %q, want %q (the partial write kept, nothing else)", got, "one\ntwo")
	}
	if p.due().IsZero() {
		t.Fatal("a failed write asks for no retry")
	}
	f.full = false
	retryNow(p)
	p.retry()
	if got := f.buf.String(); got != "one\ntwo\nthree\n" || len(losses) != 0 {
		t.Fatalf("after the disk recovered the file holds %q, losses %q; want every line once, in order, and no loss", got, losses)
	}
	if !p.due().IsZero() {
		t.Error("a recovered spool still asks for a retry")
	}
}

func TestSpoolDropsBeyondItsBoundAndSaysHowMuch(t *testing.T) {
	f := &flakyFile{full: true}
	var losses []string
	p := newSpool(f, func(l string) { losses = append(losses, l) })
	line := []byte(strings.Repeat("x", 1023) + "\n")
	for range spoolMax/len(line) + 10 {
		p.Write(line)
	}
	if len(p.pending) > spoolMax {
		t.Fatalf("spool holds %d bytes, more than its bound %d", len(p.pending), spoolMax)
	}
	f.full = false
	retryNow(p)
	p.Write([]byte("after\n"))
	want := strings.Repeat(string(line), spoolMax/len(line)) + "[qtask: 10240 bytes lost: no space left on device]\nafter\n"
	if got := f.buf.String(); got != want {
		t.Errorf("file ends with %q, want the kept lines, one loss note, then the new line", got[max(0, len(got)-120):])
	}
	if len(losses) != 1 || losses[0] != "10240 bytes lost: no space left on device" {
		t.Errorf("losses reported: %q, want exactly one naming the bytes and the error", losses)
	}
}

func TestSpoolDrainGivesUpAtItsDeadline(t *testing.T) {
	f := &flakyFile{full: true}
	p := newSpool(f, nil)
	p.Write([]byte("stuck\n"))
	var told []error
	loss := p.drain(time.Now().Add(50*time.Millisecond), func(err error) { told = append(told, err) })
	if loss != "the last 6 bytes could not be written: no space left on device" {
		t.Errorf("drain against a full disk = %q, want the bytes and the reason", loss)
	}
	if len(told) < 2 || told[0] == nil || told[len(told)-1] != nil {
		t.Errorf("blocked was told %v, want the error while waiting and nil at the end", told)
	}
}

func TestSpoolCutsLossesAtLineEnds(t *testing.T) {
	f := &flakyFile{full: true}
	p := newSpool(f, nil)
	line := strings.Repeat("x", 1023) + "\n"
	kept := strings.Repeat(line, spoolMax/len(line)-1)
	p.Write([]byte(kept))
	p.Write([]byte("head of a line"))          // fits, but its line will be cut
	p.Write([]byte(strings.Repeat("y", 2000))) // does not fit
	f.full = false
	retryNow(p)
	p.Write([]byte("tail\nnext\n"))
	want := kept + "[qtask: 2019 bytes lost: no space left on device]\nnext\n"
	if got := f.buf.String(); got != want {
		t.Errorf("file ends with %q, want %q", got[max(0, len(got)-80):], want[len(want)-80:])
	}
}
