package tmux

import (
	"context"
	"strings"
	"time"
	"unicode"
)

// PaneInMode reports whether pane shows a mode (copy mode, a chooser):
// keys sent to it now would drive the mode, not reach the program.
func (s Server) PaneInMode(ctx context.Context, pane PaneID) (bool, error) {
	out, err := s.display(ctx, string(pane), "#{pane_in_mode}")
	return out != "0", err
}

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
