package notify

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/qtask/qtask/tmux"
)

// The wake of an idle agent (`--wake tmux`, for agents without async
// hooks): the store claims the agent's idle presence (ClaimIdleAgent) and
// types one short line into its pane; the agent takes it as a prompt, and
// its prompt hook injects the full notification. Here is what needs no
// store: the lines typed, and the look at the pane that decides whether
// the agent's input box is empty. A line is never typed into a pane in a
// mode (copy mode would take the keys as commands), nor into an input box
// that holds text: a person's half-typed prompt and the line would be sent
// as one.

// CursorReader reads the row a pane's cursor is on (tmux.Server does).
type CursorReader interface {
	ReadCursorRow(ctx context.Context, pane tmux.PaneID) (tmux.CursorRow, error)
}

// wakeLook is how long a wake keeps looking for the agent's input box to
// show empty, and wakeLookEvery how often: a TUI redrawing (a spinner, a
// clock) moves the cursor away from its box for a moment, and one look
// that fell in that moment left an idle agent unwoken. Text a person has
// typed stays for the whole look, and the wake types nothing.
const (
	wakeLook      = 2 * time.Second
	wakeLookEvery = 100 * time.Millisecond
)

// InputReady reports whether pane shows no mode and an empty input box
// (the cursor followed by placeholder, the agent's TUI's sign of an empty
// box, as its hooks named it) at one of its looks within two seconds.
// With no placeholder known, no box is empty.
func InputReady(ctx context.Context, r CursorReader, pane tmux.PaneID, placeholder string) bool {
	deadline := time.Now().Add(wakeLook)
	for {
		row, err := r.ReadCursorRow(ctx, pane)
		if err == nil && !row.InMode && inputEmpty(row, placeholder) {
			return true
		}
		if err != nil && ctx.Err() != nil || placeholder == "" || time.Now().After(deadline) {
			return false
		}
		time.Sleep(wakeLookEvery)
	}
}

// inputEmpty reports whether the cursor row shows an empty input box: the
// cursor followed by the placeholder (after the cell the TUI draws its own
// cursor in, and spaces or zero-width characters). Text typed into the box
// takes the placeholder away, or (typed over it by a plain terminal)
// leaves only its end after the cursor.
func inputEmpty(row tmux.CursorRow, placeholder string) bool {
	after := strings.TrimLeftFunc(row.AfterCursor, func(r rune) bool { return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) })
	return placeholder != "" && strings.HasPrefix(after, placeholder)
}

// WakeLine is the line typed into an idle agent's pane when task id ends
// with status (its status text), e.g. "[qtask] task 3f9a1c02 finished:
// failed: exited with code 2. Read its notification."
func WakeLine(id, status string) string {
	return "[qtask] task " + id + " finished: " + status + ". Read its notification."
}

// EventWakeLine is the line typed into an idle agent's pane for monitor
// id's count-th event, e.g. "[qtask] monitor 8c1d3e07 event 3. Read its
// notification." The line itself is in the notification, not typed: it is
// the command's output, not the agent's prompt.
func EventWakeLine(id string, count int) string {
	return "[qtask] monitor " + id + " event " + strconv.Itoa(count) + ". Read its notification."
}
