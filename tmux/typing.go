package tmux

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mattn/go-runewidth"
)

// CursorRow is the screen row of a pane that holds its cursor, as drawn,
// split at the cursor: where a program reading a line from its terminal
// (an agent's input box) puts what is typed next, and what it shows from
// there on (a placeholder, when the box is empty).
type CursorRow struct {
	BeforeCursor, AfterCursor string
	// InMode: the pane shows a mode (copy mode, a chooser): keys sent to
	// it now would drive the mode, not reach the program.
	InMode bool
}

// ReadCursorRow reads pane's mode, cursor and screen in one command list,
// which the server runs in one go: the row is the one the cursor was on,
// not one a redraw in between moved.
func (s Server) ReadCursorRow(ctx context.Context, pane PaneID) (CursorRow, error) {
	t := string(pane)
	out, err := s.run(ctx, "display-message", "-p", "-t", t, "#{pane_in_mode}|#{cursor_x}|#{cursor_y}", ";", "capture-pane", "-p", "-t", t)
	if err != nil {
		return CursorRow{}, err
	}
	return parseCursorRow(out)
}

// parseCursorRow reads ReadCursorRow's answer: the format line, then the
// screen's rows (capture-pane leaves out trailing spaces, so a row can end
// before the cursor).
func parseCursorRow(out string) (CursorRow, error) {
	head, screen, _ := strings.Cut(out, "\n")
	f := strings.Split(head, "|")
	var x, y int
	var err error
	if len(f) == 3 {
		if x, err = strconv.Atoi(f[1]); err == nil {
			y, err = strconv.Atoi(f[2])
		}
	}
	if len(f) != 3 || err != nil || x < 0 || y < 0 {
		return CursorRow{}, fmt.Errorf("unexpected cursor position %q", head)
	}
	row := ""
	if rows := strings.Split(screen, "\n"); y < len(rows) {
		row = rows[y]
	}
	before, after := splitAtColumn(row, x)
	return CursorRow{BeforeCursor: before, AfterCursor: after, InMode: f[0] != "0"}, nil
}

// splitAtColumn splits a row of a terminal screen at column x, counting
// a wide character (CJK, most emoji) as the two cells it fills.
func splitAtColumn(row string, x int) (string, string) {
	col := 0
	for i, r := range row {
		if col >= x {
			return row[:i], row[i:]
		}
		col += cellWidth.RuneWidth(r)
	}
	return row, ""
}

// cellWidth counts cells as tmux does in a UTF-8 client: East Asian
// ambiguous characters are narrow.
var cellWidth = &runewidth.Condition{EastAsianWidth: false}

// A person presses Enter after the line is on the screen. gemini-cli 0.61
// takes an Enter that it reads within 30 ms of the key before it for a
// pasted newline, not a submission (its FAST_RETURN_TIMEOUT), and under
// load a program can read the text and an Enter sent right after it in
// one go. So TypeLine waits until the end of the text shows in the pane
// once more than it did before (polled every echoPoll: a wake line's end
// is the same every time, and the last one may still be on the screen),
// then until the screen has stayed the same for enterPause (the program
// is done with the text), at most echoWait in all, then presses Enter.
// The end is looked for with spaces, line breaks and box-drawing borders
// taken out (onScreen): an agent's input box wraps a long line inside its
// own border, which capture-pane -J cannot join.
const (
	echoWait   = 3 * time.Second
	echoPoll   = 20 * time.Millisecond
	enterPause = 100 * time.Millisecond
)

// TypeLine types text into pane as a person would — its characters
// literally (control and bidirectional-override characters dropped, so
// nothing in it can act as a key of its own), then, once the program has
// shown them and gone quiet, Enter — for waking a program that reads
// lines from its terminal.
func (s Server) TypeLine(ctx context.Context, pane PaneID, text string) error {
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, text)
	tail := lastRunes(onScreen(text), 16)
	screen := func() (string, error) {
		shown, err := s.run(ctx, "capture-pane", "-p", "-J", "-t", string(pane))
		return onScreen(shown), err
	}
	shownBefore := -1 // unknown: any showing counts
	if before, err := screen(); err == nil {
		shownBefore = strings.Count(before, tail)
	}
	if text != "" {
		if _, err := s.run(ctx, "send-keys", "-t", string(pane), "-l", "--", text); err != nil {
			return err
		}
		if err := awaitEcho(ctx, screen, tail, shownBefore); err != nil {
			return err
		}
	}
	_, err := s.run(ctx, "send-keys", "-t", string(pane), "Enter")
	return err
}

// awaitEcho waits, at most echoWait, until screen shows tail more often
// than shownBefore times and then stays unchanged for enterPause. A screen
// that cannot be read ends the wait after enterPause (Enter goes anyway, as
// a person's would, but not on the heels of the text).
func awaitEcho(ctx context.Context, screen func() (string, error), tail string, shownBefore int) error {
	deadline := time.Now().Add(echoWait)
	echoed, last := tail == "", "" // nothing to see (blank text): only the quiet
	for time.Now().Before(deadline) {
		shown, err := screen()
		if err != nil {
			return pause(ctx, enterPause)
		}
		if echoed && shown == last {
			return nil
		}
		poll := echoPoll
		if echoed = echoed || strings.Count(shown, tail) > shownBefore; echoed {
			poll = enterPause
		}
		last = shown
		if err := pause(ctx, poll); err != nil {
			return err
		}
	}
	return nil
}

// onScreen is s as TypeLine compares it with a pane's text: without
// whitespace (line breaks included) and box-drawing characters, so that a
// line wrapped inside a bordered input box reads whole.
func onScreen(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) || r >= 0x2500 && r <= 0x257f {
			return -1
		}
		return r
	}, s)
}

// lastRunes is the last n runes of s.
func lastRunes(s string, n int) string {
	r := []rune(s)
	return string(r[max(0, len(r)-n):])
}

func pause(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
