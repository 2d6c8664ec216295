package notify

import (
	"testing"

	"github.com/qtask/qtask/tmux"
)

// An input box is empty when its cursor is followed by the placeholder the
// hooks named, as qwen-code and gemini-cli draw it (captured in tmux):
// after the cell of their own cursor and spaces. Typed text takes the
// placeholder away, or leaves only its end; with no placeholder known,
// no box is empty.
func TestInputEmpty(t *testing.T) {
	const ph = "Type your message"
	cases := []struct {
		after, placeholder string
		want               bool
	}{
		{"  Type your message or @path/to/file", ph, true}, // qwen and gemini, empty
		{" Type your message or", ph, true},                // a narrow pane wraps the rest
		{" \u200b", ph, false},                             // qwen, text typed, the cursor at its end
		{"", ph, false},                                    // gemini, text typed
		{"file", ph, false},                                // typed over the placeholder
		{"lint resu", ph, false},                           // the cursor moved back into the text
		{"  Type your message", "", false},
	}
	for _, c := range cases {
		if got := inputEmpty(tmux.CursorRow{BeforeCursor: "* ", AfterCursor: c.after}, c.placeholder); got != c.want {
			t.Errorf("inputEmpty(after the cursor %q, placeholder %q) = %v, want %v", c.after, c.placeholder, got, c.want)
		}
	}
}
