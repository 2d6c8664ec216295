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

// enterPause is how long TypeLine waits between the text and its Enter:
// gemini-cli 0.61 takes an Enter that comes within 30 ms of the key before
// it for a pasted newline, not a submission (its FAST_RETURN_TIMEOUT), as
// a person's Enter never does.
const enterPause = 100 * time.Millisecond

// TypeLine types text into pane as a person would — its characters
// literally (control and bidirectional-override characters dropped, so
// nothing in it can act as a key of its own), then, after a pause, Enter —
// for waking a program that reads lines from its terminal.
func (s Server) TypeLine(ctx context.Context, pane PaneID, text string) error {
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, text)
	if _, err := s.run(ctx, "send-keys", "-t", string(pane), "-l", "--", text); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(enterPause):
	}
	_, err := s.run(ctx, "send-keys", "-t", string(pane), "Enter")
	return err
}
