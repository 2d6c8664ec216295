package capture

import (
	"strings"

	"github.com/qtask/qtask/tmux"
)

// Seed is the screen an adopted pane showed when its pipe was attached.
// The capture starts its screen model on it, so that the program's
// redraws of that screen (a progress bar going on in place) apply to it,
// as they do in the pane, rather than start over below it. The store keeps
// it, as JSON, between the adopt and the capture.
type Seed struct {
	Rows []string `json:"rows"`
	// Hidden is how many of the first rows are not the task's output
	// (the prompt and the command line).
	Hidden    int  `json:"hidden"`
	CursorX   int  `json:"cursor_x"`
	CursorY   int  `json:"cursor_y"`
	Alternate bool `json:"alternate,omitempty"`
}

// SplitSnapshot divides what an adopted pane showed, from line start of
// its history and screen on (what the command printed), into final text —
// the history's lines, which nothing can redraw any more — and the screen,
// which the capture goes on from.
func SplitSnapshot(snap tmux.PaneSnapshot, start int) (string, Seed) {
	var final strings.Builder
	for _, line := range snap.History[min(start, len(snap.History)):] {
		final.WriteString(strings.TrimRight(line, " "))
		final.WriteByte('\n')
	}
	seed := Seed{Rows: snap.Screen, Hidden: max(start-len(snap.History), 0),
		CursorX: snap.CursorX, CursorY: snap.CursorY, Alternate: snap.Alternate}
	return final.String(), seed
}
