package tasks

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/qtask/qtask/tmux"
)

// When a background task ends, the people watching the session it was
// started from are told (a message on their status line, or their
// terminal's bell). This is the task's own news, not the status segment's
// (package statusline): it needs the task's label, outcome and caller
// pane, and goes to that session's clients only.

// endMessageTimeout bounds each tmux call that tells clients a task ended.
const endMessageTimeout = 2 * time.Second

// EndNotifyOption is the tmux user option saying how the people watching
// the session that started a background task hear that it ended:
// "message" (the default), "bell" or "off".
const EndNotifyOption = "@qtask-notify"

// The values of EndNotifyOption.
const (
	NotifyMessage = "message"
	NotifyBell    = "bell"
	NotifyOff     = "off"
)

// EndNotifyTimeOption is the tmux user option saying how long, in
// milliseconds, the end message stays on the status line (0: until a key
// is pressed). Unset or not a number: DefaultEndNotifyTime. tmux's own
// display-time, 750 ms by default, is easily missed.
const EndNotifyTimeOption = "@qtask-notify-time"

// DefaultEndNotifyTime is how long the end message shows by default.
const DefaultEndNotifyTime = 4 * time.Second

// endNotifyTime reads EndNotifyTimeOption's value.
func endNotifyTime(value string) time.Duration {
	ms, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || ms < 0 {
		return DefaultEndNotifyTime
	}
	return time.Duration(ms) * time.Millisecond
}

// tellClients tells the clients attached to the session a background task
// was started from that it ended: `✓ npm test 12s`, `✗ make exit 2`. Only
// those clients, never others; nothing for a foreground task (its caller
// was watching), a stop (whoever stopped it knows) or a task started
// outside tmux. Best effort: the task has ended whatever tmux says.
func tellClients(r *record) {
	if !r.Background || r.CallerPane == "" || r.Status == StatusCancelled {
		return
	}
	server, err := r.server()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), endMessageTimeout)
	defer cancel()
	mode, err := server.GlobalOption(ctx, EndNotifyOption)
	if err != nil || mode == NotifyOff {
		return
	}
	session, err := server.SessionOf(ctx, tmux.PaneID(r.CallerPane))
	if err != nil {
		return
	}
	if mode == NotifyBell {
		ttys, _ := server.ClientTTYs(ctx, session)
		for _, tty := range ttys {
			ringBell(tty)
		}
		return
	}
	clients, _ := server.SessionClients(ctx, session)
	if len(clients) == 0 {
		return
	}
	shown, _ := server.GlobalOption(ctx, EndNotifyTimeOption)
	for _, c := range clients {
		server.MessageFor(ctx, c, endMessage(r), endNotifyTime(shown))
	}
}

// endMessage is the one line a client is shown when a task ends.
func endMessage(r *record) string {
	runtime := r.Runtime(time.Now()).Round(time.Second)
	label := shortLabel(r.Label(), 40)
	if r.Status == StatusCompleted {
		return fmt.Sprintf("✓ %s %s", label, runtime)
	}
	why := "failed"
	if r.ExitCode != nil {
		why = fmt.Sprintf("exit %d", *r.ExitCode)
	}
	return fmt.Sprintf("✗ %s %s %s — qtask status %s", label, why, runtime, r.ID)
}

// shortLabel makes a command or name safe and short for a status line:
// controls (including bidi ones) become spaces, and it is cut at width
// characters.
func shortLabel(s string, width int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return ' '
		}
		return r
	}, s)
	if r := []rune(s); len(r) > width {
		return string(r[:width-1]) + "…"
	}
	return s
}

// ringBell writes BEL to a client's terminal, which rings it as the
// terminal is set to (tmux passes nothing else there).
func ringBell(tty string) {
	f, err := os.OpenFile(tty, os.O_WRONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	f.Write([]byte{'\a'})
	f.Close()
}
