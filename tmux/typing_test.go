package tmux

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestMain lets the test binary stand in for a slow TUI in a pane.
func TestMain(m *testing.M) {
	if log := os.Getenv("QTASK_TEST_SLOW_TUI"); log != "" {
		slowTUI(log)
		return
	}
	os.Exit(m.Run())
}

// slowTUI behaves as gemini-cli does under load: it reads its terminal only
// every 300 ms, echoes what it read, and takes an Enter read together with
// the characters before it for a pasted newline, not a submission. A line
// it submits goes to the file log. Its screen starts with an earlier wake
// line, whose end is the same as the next one's.
func slowTUI(log string) {
	termios, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		os.Exit(1)
	}
	termios.Lflag &^= unix.ICANON | unix.ECHO
	termios.Iflag &^= unix.ICRNL
	if unix.IoctlSetTermios(0, unix.TCSETS, termios) != nil || unix.SetNonblock(0, true) != nil {
		os.Exit(1)
	}
	fmt.Print("> [qtask] task 00000000 finished: completed (exit 0). Read its notification.\r\n> ")
	var line []byte
	buf := make([]byte, 4096)
	for {
		time.Sleep(300 * time.Millisecond)
		n, _ := unix.Read(0, buf)
		typed := false
		for _, c := range buf[:max(n, 0)] {
			switch {
			case c == '\r' && typed:
				line = append(line, '\n')
				fmt.Print("\r\n  ")
			case c == '\r':
				// Whole or not at all: the test reads log as soon as it
				// exists, and a file created but not yet written read "".
				os.WriteFile(log+".tmp", append(line, '\n'), 0o600)
				os.Rename(log+".tmp", log)
				line = nil
				fmt.Print("\r\n> ")
			default:
				line, typed = append(line, c), true
				fmt.Printf("%c", c)
			}
		}
	}
}

// TestTypeLineWaitsForTheProgram types a wake line into a program that is
// slow to read its keys and shows the end of an earlier wake line already:
// the Enter must reach it in a later read than the text, so that it submits
// the line rather than taking the Enter for a pasted newline.
func TestTypeLineWaitsForTheProgram(t *testing.T) {
	server, sock, root := privateServer(t, "qty")
	log := filepath.Join(root, "submitted")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("tmux", "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", "120", "-y", "10",
		"env", "QTASK_TEST_SLOW_TUI="+log, self).CombinedOutput(); err != nil {
		t.Fatalf("new-session: %v: %s", err, out)
	}
	pane := PaneID("%0")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		shown, _ := server.run(context.Background(), "capture-pane", "-p", "-t", string(pane))
		if strings.Contains(shown, "Read its notification.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the program did not start:\n%s", shown)
		}
	}
	const line = "[qtask] task 3f9a1c02 finished: failed: exited with code 2. Read its notification."
	if err := server.TypeLine(context.Background(), pane, line); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := os.ReadFile(log); err == nil {
			if string(got) != line+"\n" {
				t.Fatalf("the program got %q, want the line %q", got, line)
			}
			return
		}
		if time.Now().After(deadline) {
			shown, _ := server.run(context.Background(), "capture-pane", "-p", "-t", string(pane))
			t.Fatalf("the line was never submitted (its Enter read as a newline?); the pane shows:\n%s", shown)
		}
	}
}

// TestEchoSeenThroughABorderedBox: an agent's input box wraps a long line
// inside its border, which capture-pane -J does not join; the typed line's
// end is still seen (with one already on the screen), and Enter follows
// once the screen is quiet, not after echoWait.
func TestEchoSeenThroughABorderedBox(t *testing.T) {
	box := func(text string) string {
		var b strings.Builder
		for r := []rune(text); len(r) > 0; r = r[min(40, len(r)):] {
			fmt.Fprintf(&b, "│ %-40s │\n", string(r[:min(40, len(r))]))
		}
		return b.String()
	}
	const earlier = "> [qtask] task 00000000 finished: completed (exit 0). Read its notification."
	const line = "[qtask] task 3f9a1c02 finished: failed: exited with code 2. Read its notification."
	before, after := box(earlier)+box("> "), box(earlier)+box("> "+line)
	tail := lastRunes(onScreen(line), 16)
	reads := 0
	screen := func() (string, error) { reads++; return onScreen(after), nil }
	if err := awaitEcho(context.Background(), screen, tail, strings.Count(onScreen(before), tail)); err != nil {
		t.Fatal(err)
	}
	if reads != 2 {
		t.Errorf("the screen was read %d times, want 2 (the echo, then the same screen once quiet): the wrapped line's end was not seen", reads)
	}
}

// The cursor row is split at the cursor's column as tmux counts columns:
// a wide character fills two; a row that ends before the cursor has
// nothing after it; a row the screen lacks is empty.
func TestParseCursorRow(t *testing.T) {
	cases := []struct {
		out           string
		before, after string
		inMode        bool
	}{
		{"0|2|1\nline 0\n*   Type your message\n", "* ", "  Type your message", false},
		{"0|33|0\n* please also check the lint resu ​\n", "* please also check the lint resu", " \u200b", false},
		{"0|6|0\n> 日本語x\n", "> 日本", "語x", false},
		{"1|2|0\n> ab\n", "> ", "ab", true},
		{"0|9|0\n> ab\n", "> ab", "", false},
		{"0|0|5\n> ab\n", "", "", false},
	}
	for _, c := range cases {
		got, err := parseCursorRow(c.out)
		if err != nil || got != (CursorRow{BeforeCursor: c.before, AfterCursor: c.after, InMode: c.inMode}) {
			t.Errorf("parseCursorRow(%q) = %+v, %v; want %q|%q in mode %v", c.out, got, err, c.before, c.after, c.inMode)
		}
	}
	for _, bad := range []string{"", "0|x|1\n", "0|1\n", "0|-1|0\n"} {
		if _, err := parseCursorRow(bad); err == nil {
			t.Errorf("parseCursorRow(%q) accepted", bad)
		}
	}
}
