// Command menuclient times tmux key bindings as a person meets them: it
// attaches a real tmux client to a server on a pseudo-terminal it owns,
// presses prefix and a key by writing them into that terminal, and measures
// from the key's byte to the moment the expected text has reached the
// client's screen (tmux has drawn it on the terminal). Used by
// bench/menu.sh to time the task menu (prefix T) against a popup that runs
// cat, bound the same way, alternating the two so both see the same load.
//
//	menuclient -socket S -session NAME -runs N \
//	    -case 'name:key:keys that close it:text to wait for' ...
//
// It prints one line per sample: "name microseconds".
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/qtask/qtask/internal/pty"
)

type benchCase struct {
	name, key, text, close string
}

type caseList []benchCase

func (c *caseList) String() string { return fmt.Sprint(*c) }
func (c *caseList) Set(v string) error {
	f := strings.SplitN(v, ":", 4)
	if len(f) != 4 {
		return fmt.Errorf("want name:key:close:text, got %q", v)
	}
	*c = append(*c, benchCase{name: f[0], key: f[1], close: unescape(f[2]), text: f[3]})
	return nil
}

// unescape turns \xNN in close keys into bytes (\x1b is Esc, \x04 C-d).
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			var n byte
			fmt.Sscanf(s[i+2:i+4], "%02x", &n)
			b.WriteByte(n)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// screen is everything tmux has drawn on the client's terminal.
type screen struct {
	mu  sync.Mutex
	out bytes.Buffer
	// seen wakes a waiter after each read; one wake pending is enough.
	seen chan struct{}
}

// record reads everything the client gets into s as soon as it comes, so
// the time a text is seen is when tmux wrote it, give or take this
// goroutine's wake-up. It returns when the terminal closes.
func (s *screen) record(master *os.File) {
	buf := make([]byte, 65536)
	for {
		n, err := master.Read(buf)
		s.mu.Lock()
		s.out.Write(buf[:n])
		s.mu.Unlock()
		select {
		case s.seen <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// wait returns the time text was first seen drawn after offset mark, or
// false once limit has passed without it.
func (s *screen) wait(mark int, text string, limit time.Duration) (time.Time, bool) {
	deadline := time.After(limit)
	for {
		if s.since(mark, text) {
			return time.Now(), true
		}
		select {
		case <-s.seen:
		case <-deadline:
			return time.Time{}, false
		}
	}
}

func (s *screen) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.Len()
}

// since reports whether text was drawn after offset mark.
func (s *screen) since(mark int, text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Contains(s.out.Bytes()[mark:], []byte(text))
}

func main() {
	socket := flag.String("socket", "", "the tmux server's socket")
	session := flag.String("session", "", "the session to attach to")
	runs := flag.Int("runs", 30, "samples per case")
	warmup := flag.Int("warmup", 3, "unrecorded runs per case first")
	dump := flag.String("dump", "", "write everything drawn on the client to this file at the end")
	var cases caseList
	flag.Var(&cases, "case", "name:key:close:text (repeatable; the text may hold colons)")
	flag.Parse()
	if *socket == "" || *session == "" || len(cases) == 0 {
		fmt.Fprintln(os.Stderr, "menuclient: need -socket, -session and -case")
		os.Exit(2)
	}
	master, client := attach(*socket, *session)
	defer client.Process.Kill()
	scr := &screen{seen: make(chan struct{}, 1)}
	go scr.record(master)
	if _, ok := scr.wait(0, "["+*session+"]", 10*time.Second); !ok {
		fail("the client never drew the session's status line")
	}
	for i := 0; i < *warmup+*runs; i++ {
		for _, c := range cases {
			d := once(master, scr, c)
			if i >= *warmup {
				fmt.Printf("%s %d\n", c.name, d.Microseconds())
			}
		}
	}
	if *dump != "" {
		scr.mu.Lock()
		os.WriteFile(*dump, scr.out.Bytes(), 0o600)
		scr.mu.Unlock()
	}
}

// attach starts a tmux client of session on a pseudo-terminal of its own,
// 40x120, as a person's terminal would be, and returns the terminal's
// master side, where keys are typed and the client's drawing is read.
func attach(socket, session string) (*os.File, *exec.Cmd) {
	master, tty, err := pty.Open(40, 120)
	if err != nil {
		fail("%v", err)
	}
	client := exec.Command("tmux", "-S", socket, "-u", "attach-session", "-t", "="+session)
	client.Env = append(os.Environ(), "TERM=xterm-256color")
	client.Stdin, client.Stdout, client.Stderr = tty, tty, tty
	client.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := client.Start(); err != nil {
		fail("attach: %v", err)
	}
	tty.Close()
	return master, client
}

// once opens c's binding, times its first frame, closes it and waits for
// the screen to be the session's again.
func once(master *os.File, scr *screen, c benchCase) time.Duration {
	write(master, "\x02")
	time.Sleep(30 * time.Millisecond) // a person's gap: past assume-paste-time
	mark := scr.len()
	start := time.Now()
	write(master, c.key)
	drawn, ok := scr.wait(mark, c.text, 10*time.Second)
	if !ok {
		fail("%s: %q never drawn after prefix %s", c.name, c.text, c.key)
	}
	mark = scr.len()
	write(master, c.close)
	// The popup's end redraws the pane under it; then let tmux settle.
	if _, ok := scr.wait(mark, "\x1b[", 10*time.Second); !ok {
		fail("%s: nothing redrawn after closing", c.name)
	}
	time.Sleep(300 * time.Millisecond)
	return drawn.Sub(start)
}

func write(f *os.File, s string) {
	if _, err := f.WriteString(s); err != nil {
		fail("type: %v", err)
	}
}

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "menuclient: "+format+"\n", a...)
	os.Exit(1)
}
