package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/internal/pty"
	"github.com/qtask/qtask/tasks/render"
)

// ttyClient is a real tmux client attached to the harness's server on a pty
// the test owns: what the test types into it reaches tmux as keystrokes
// from a person (key bindings fire, unlike send-keys), and everything tmux
// draws (the status line, messages) is kept for the test to read.
type ttyClient struct {
	t    *testing.T
	pty  *os.File
	name string // the client's name in tmux: its tty

	mu  sync.Mutex
	out bytes.Buffer
}

// openPTY opens a pseudo-terminal pair of rows×cols.
func openPTY(t *testing.T, rows, cols uint16) (master, tty *os.File) {
	t.Helper()
	master, tty, err := pty.Open(rows, cols)
	if err != nil {
		t.Fatal(err)
	}
	return master, tty
}

// The size of a ptyClient's terminal.
const clientRows, clientCols = 40, 120

// ptyClient attaches a client to session on a fresh clientCols×clientRows
// pty.
func (h *harness) ptyClient(session string) *ttyClient {
	h.t.Helper()
	master, tty := openPTY(h.t, clientRows, clientCols)
	cmd := exec.Command("tmux", "-S", h.socket, "-u", "attach-session", "-t", "="+session)
	cmd.Env = append(append([]string{}, h.env...), "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		h.t.Fatalf("attach a tmux client: %v", err)
	}
	tty.Close()
	c := &ttyClient{t: h.t, pty: master, name: filepath.Clean("/dev/pts/" + ptsNumber(master))}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			c.mu.Lock()
			c.out.Write(buf[:n])
			c.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	h.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		master.Close()
		<-done
	})
	// Keys typed before tmux puts the terminal in raw mode can be lost:
	// wait until it has drawn the session's status line.
	eventually(h.t, "the client to attach and draw", func() bool {
		names, _ := h.tmux("list-clients", "-F", "#{client_name}")
		return strings.Contains(names, c.name) && strings.Contains(c.drawn(), "["+session+"]")
	})
	return c
}

func ptsNumber(master *os.File) string {
	n, _ := unix.IoctlGetUint32(int(master.Fd()), unix.TIOCGPTN)
	return fmt.Sprint(n)
}

// typeKeys writes keystrokes into the client's terminal ("\x02" is C-b).
func (c *ttyClient) typeKeys(keys string) {
	c.t.Helper()
	if _, err := io.WriteString(c.pty, keys); err != nil {
		c.t.Fatalf("type into the client: %v", err)
	}
}

// pressPrefixKey presses tmux's prefix, then key, as a person would: two
// key presses apart in time. Written in one go they can arrive within
// tmux's assume-paste-time (1 ms) of the session's last activity, and tmux
// then takes the key for pasted text and sends it to the pane instead of
// looking it up in the prefix table (measured: "x\x02B" in one write puts
// "xB" at the shell's prompt).
func (c *ttyClient) pressPrefixKey(key string) {
	c.t.Helper()
	c.typeKeys(prefix)
	time.Sleep(keyPressGap)
	c.typeKeys(key)
}

// keyPressGap is well past tmux's default assume-paste-time of 1 ms, and
// still far quicker than a person types.
const keyPressGap = 30 * time.Millisecond

// drawn is everything tmux has drawn on the client's terminal so far.
func (c *ttyClient) drawn() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// waitDrawn waits until tmux has drawn text on the client's terminal. On
// failure it shows the end of what was drawn.
func (c *ttyClient) waitDrawn(text string) {
	c.t.Helper()
	c.waitDrawnSince(0, text)
}

// mark is how much tmux has drawn so far, for waitDrawnSince.
func (c *ttyClient) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Len()
}

// waitDrawnSince is waitDrawn for text drawn after mark: a menu drawn
// again, not the one drawn before.
func (c *ttyClient) waitDrawnSince(mark int, text string) {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(c.drawn()[mark:], text) {
		if time.Now().After(deadline) {
			tail := c.drawn()
			if len(tail) > 3000 {
				tail = tail[len(tail)-3000:]
			}
			c.t.Fatalf("timed out waiting for tmux to draw %q on client %s; it drew, last:\n%q", text, c.name, tail)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// prefix is tmux's default prefix key, C-b.
const prefix = "\x02"

// screen is the client's terminal now, as rows of text: everything tmux
// drew on it, played through qtask's own model of a terminal
// (tasks/render), which shows popups and menus where capture-pane sees
// only the pane under them. tmux draws on the terminal's alternate screen;
// the model would set that aside, so the switch to it is left out.
func (c *ttyClient) screen() []string {
	drawn := strings.NewReplacer("\x1b[?1049h", "", "\x1b[?1049l", "").Replace(c.drawn())
	var scrolled bytes.Buffer
	s := render.New(&scrolled, render.Options{Width: clientCols, Height: clientRows})
	s.Write([]byte(drawn))
	live, _ := s.AppendLive(nil)
	return strings.Split(string(live), "\n")
}

// waitScreen waits until the client's terminal shows what holds for, and
// returns that screen. On failure it shows the last screen.
func (c *ttyClient) waitScreen(what string, holds func(rows []string) bool) []string {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		rows := c.screen()
		if holds(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for the client %s to show %s; it shows:\n%s", c.name, what, strings.Join(rows, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// rowWith is the first of rows that contains text, "" if none does.
func rowWith(rows []string, text string) string {
	for _, r := range rows {
		if strings.Contains(r, text) {
			return r
		}
	}
	return ""
}
