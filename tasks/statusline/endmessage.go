package statusline

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
// started from are told on their status line (or by their terminal's
// bell): the segment's counts say that something ended, this says what.
// A background monitor's events can be shown the same way.

// notifyOption is the tmux user option saying how the people watching
// the session that started a background task hear that it ended:
// notifyMessage (the default, and any value but the other two), notifyBell
// or notifyOff.
const notifyOption = "@qtask-notify"

// The values of notifyOption (and of eventsOption).
const (
	notifyMessage = "message"
	notifyBell    = "bell"
	notifyOff     = "off"
)

// eventsOption is the tmux user option that, set to "on", shows each event
// of a background monitor to the people watching the session that started
// it, as an end is shown (set to notifyBell, rings their bell instead).
// Off unless set: events can come once a second.
const eventsOption = "@qtask-notify-events"

// notifyTimeOption is the tmux user option saying how long, in
// milliseconds, the end message (and an event's) stays on the status line (0: until a key
// is pressed). Unset or not a number: defaultNotifyTime. tmux's own
// display-time, 750 ms by default, is easily missed.
const notifyTimeOption = "@qtask-notify-time"

// defaultNotifyTime is how long the end message shows by default.
const defaultNotifyTime = 4 * time.Second

// notifyTime reads notifyTimeOption's value.
func notifyTime(value string) time.Duration {
	ms, err := strconv.Atoi(strings.TrimSpace(value))
	if err != nil || ms < 0 {
		return defaultNotifyTime
	}
	return time.Duration(ms) * time.Millisecond
}

// Ended is what the end message says of a task.
type Ended struct {
	ID        string
	Label     string        // its name or command, as the user knows it
	Completed bool          // exit 0; otherwise it failed
	ExitCode  *int          // nil when it has none (a signal, a lost wrapper)
	Runtime   time.Duration // from start to end
}

// TellEnd tells the clients attached to the session of caller (the pane
// the task was started from) on server that the task ended: `✓ npm test
// 12s`, `✗ make exit 2`, or their terminals' bell, as notifyOption says.
// Only those clients, never others. Whether a task is told at all is the
// caller's decision. Best effort: the task has ended whatever tmux says.
func TellEnd(server tmux.Server, caller tmux.PaneID, e Ended) {
	tell(server, caller, notifyOption, notifyMessage, e.message())
}

// TellEvent shows an event line of a monitor (its label, as the user
// knows it) to the clients attached to the session of caller, as an end
// is shown: `⚑ tail -F app.log: ERROR disk full`; only when
// eventsOption is set, as events can come once a second.
func TellEvent(server tmux.Server, caller tmux.PaneID, label, line string) {
	tell(server, caller, eventsOption, notifyOff, "⚑ "+ShortLabel(label, 30)+": "+ShortLabel(line, 80))
}

// tell tells the clients attached to the session of caller text, as tmux
// option says (a message, a bell, or nothing; fallback when it is unset).
func tell(server tmux.Server, caller tmux.PaneID, option, fallback, text string) {
	ctx, cancel := context.WithTimeout(context.Background(), tmuxTimeout)
	defer cancel()
	mode, err := server.GlobalOption(ctx, option)
	if mode == "" {
		mode = fallback
	}
	if err != nil || mode == notifyOff {
		return
	}
	session, err := server.SessionOf(ctx, caller)
	if err != nil {
		return
	}
	if mode == notifyBell {
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
	shown, _ := server.GlobalOption(ctx, notifyTimeOption)
	for _, c := range clients {
		server.MessageFor(ctx, c, text, notifyTime(shown))
	}
}

// message is the one line a client is shown when a task ends.
func (e Ended) message() string {
	runtime := e.Runtime.Round(time.Second)
	label := ShortLabel(e.Label, 40)
	if e.Completed {
		return fmt.Sprintf("✓ %s %s", label, runtime)
	}
	why := "failed"
	if e.ExitCode != nil {
		why = fmt.Sprintf("exit %d", *e.ExitCode)
	}
	return fmt.Sprintf("✗ %s %s %s — qtask status %s", label, why, runtime, e.ID)
}

// ShortLabel makes a command or name safe and short for a line tmux shows
// (the status line, a kept pane's note): controls (including bidi ones)
// become spaces, and it is cut at width characters.
func ShortLabel(s string, width int) string {
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
