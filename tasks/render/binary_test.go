package render

import "testing"

// TestBinaryTailKeepsText: the bytes of binary data just before the text
// that follows it can look like text, and the escape sequence they start
// must not eat that text. These sequences ended random bytes in
// TestBinaryOutputIsNotedNotWritten when it failed: ESC then CR LF made
// the "a" of "after" an escape's final byte; ESC P and ESC ^ opened
// strings that swallowed the rest of the stream.
func TestBinaryTailKeepsText(t *testing.T) {
	note := func(n string) string { return "[qtask: binary output suppressed: " + n + " bytes]\n" }
	for _, tc := range []struct {
		name, in, want string
	}{
		{"esc before the newline", "before\r\n\x00Z\x1b\r\nafter\r\n", "before\n" + note("4") + "\nafter\n"},
		{"charset designation cut", "before\r\n\x00ZsP\x1b-\r\nafter\r\n", "before\n" + note("7") + "\nafter\n"},
		{"control sequence cut", "before\r\n\x00\x1b[3\r\nafter\r\n", "before\n" + note("5") + "\nafter\n"},
		{"dcs left open", "before\r\n\x00\x1bP\r\nafter\r\n", "before\n" + note("4") + "\nafter\n"},
		{"pm is not ended by bel", "before\r\n\x00\x1b^\x07\r\nafter\r\n", "before\n" + note("4") + "\nafter\n"},
		{"whole sequences stay text", "before\r\n\x00\x1b]0;t\x07\x1b[1mafter\r\n", "before\n" + note("1") + "after\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := renderAll(t, []byte(tc.in), 80, 24); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
