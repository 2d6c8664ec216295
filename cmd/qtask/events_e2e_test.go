package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// eventLine is a line `qtask events` prints: time, monitor, line.
var eventLine = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  ([0-9a-f]{8})  (.*)$`)

// eventsOf parses what `qtask events` printed into "ID line" pairs.
func eventsOf(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := eventLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("qtask events printed %q, not time, task and line:\n%s", l, out)
		}
		got = append(got, m[1]+" "+m[2])
	}
	return got
}

// `qtask events` prints the events monitors recorded, each monitor's or
// all of them, and consumes nothing: the agent's inbox still gets every
// event after it, and it prints them again after the inbox consumed them.
// Lines that were no events (not matching) are not printed; a task that is
// not a monitor is refused.
func TestEventsReadsWhatMonitorsRecorded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if out := h.mustQtask("events"); out != "No monitor events.\n" {
		t.Fatalf("events with no monitor printed %q", out)
	}
	release := filepath.Join(h.root, "release")
	a := h.startMonitor("--match", "ERR", "--", "echo ok; echo ERR one; echo fine; echo 'ERR two'; "+awaitFile(release))
	b := h.startMonitor("--", "sleep 0.3; echo from-b")
	h.wait(b.ID)
	eventually(t, "monitor a's two events", func() bool { return h.status(a.ID).Events == 2 })
	touch(t, release)
	h.wait(a.ID)

	wantA := []string{a.ID + " ERR one", a.ID + " ERR two"}
	if got := eventsOf(t, h.mustQtask("events", a.ID)); strings.Join(got, "|") != strings.Join(wantA, "|") {
		t.Fatalf("events %s: %q, want %q", a.ID, got, wantA)
	}
	all := eventsOf(t, h.mustQtask("events"))
	if len(all) != 3 || !slices.Contains(all, b.ID+" from-b") || !slices.Contains(all, wantA[0]) {
		t.Fatalf("events of all monitors: %q, want a's two and b's one", all)
	}

	delivered := h.notices("every event and end", func(l []inboxEntry) bool { return ended(a.ID)(l) && ended(b.ID)(l) })
	events := 0
	for _, n := range delivered {
		if n.Event != nil {
			events++
		}
	}
	if events != 3 {
		t.Fatalf("after `qtask events` the inbox got %d events, want all 3:%s", events, describeNotices(delivered))
	}
	if got := eventsOf(t, h.mustQtask("events", a.ID)); len(got) != 2 {
		t.Fatalf("events after the inbox consumed them: %q, want both still", got)
	}

	shell := h.start("echo not-a-monitor")
	if r := h.qtask("events", shell.ID); r.code != 1 || !strings.Contains(r.stderr, "is not a monitor") {
		t.Fatalf("events of a shell task: exit %d, %q; want 1, not a monitor", r.code, r.stderr)
	}
}

// `qtask events -f ID` prints each event as the monitor records it and
// exits once the monitor has ended.
func TestEventsFollow(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	release := filepath.Join(h.root, "release")
	m := h.startMonitor("--", "echo first; "+awaitFile(release)+"; echo second")
	eventually(t, "the first event", func() bool { return h.status(m.ID).Events == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, qtaskBin, "events", "--follow", m.ID)
	cmd.Env = h.env
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	eventually(t, "the follow to print the first event", func() bool { return strings.Contains(out.String(), "first") })
	if strings.Contains(out.String(), "second") {
		t.Fatalf("follow printed an event before it happened: %q", out.String())
	}
	touch(t, release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("events -f exited with %v: %s", err, out.String())
		}
	case <-ctx.Done():
		t.Fatalf("events -f did not exit after the monitor ended: %q", out.String())
	}
	if got := eventsOf(t, out.String()); strings.Join(got, "|") != m.ID+" first|"+m.ID+" second" {
		t.Fatalf("events -f printed %q, want first then second", got)
	}
}

// With @qtask-notify-events on, a monitor's event shows on the status line
// of the client watching the session it was started from, as a task's end
// does; off (the default), nothing is shown. Through a real client on a
// pty: the message is what tmux draws on the terminal.
func TestEventFlashesOnTheStatusLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	c := h.ptyClient("work")
	// The lines the monitors print are not in the typed commands: what is
	// drawn can only be the message.
	c.typeKeys(`qtask monitor -- printf 'quiet-%s\n' event` + "\r")
	eventually(t, "the quiet monitor's event", func() bool {
		return strings.Contains(h.qtask("events").stdout, "quiet-event")
	})
	if _, err := h.tmux("set-option", "-g", "@qtask-notify-events", "on"); err != nil {
		t.Fatal(err)
	}
	// The end messages of both monitors say their commands, not the lines.
	c.typeKeys(`qtask monitor -- printf 'loud-%s\n' event` + "\r")
	c.waitDrawn("loud-event")
	if strings.Contains(c.drawn(), "quiet-event") {
		t.Fatalf("an event was shown with @qtask-notify-events unset")
	}
}
