package capture

import (
	"strings"
	"testing"
)

// The queries a program sends its terminal are taken out of the raw
// stream; everything else, escape sequences included, passes unchanged,
// however the stream is split across writes.
func TestQueryFilter(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain text", "hello\r\nworld", "hello\r\nworld"},
		{"colours and cursor moves pass", "\x1b[31mred\x1b[0m\x1b[2K\x1b[1A\x1b[?25l", "\x1b[31mred\x1b[0m\x1b[2K\x1b[1A\x1b[?25l"},
		{"device attributes", "a\x1b[cb\x1b[0cc\x1b[>cd\x1b[=ce", "abcde"},
		{"cursor position and status reports", "a\x1b[6nb\x1b[5nc\x1b[?6nd", "abcd"},
		{"mode report request", "a\x1b[?2026$pb\x1b[4$pc", "abc"},
		{"a mode set passes", "\x1b[?2026h\x1b[?1049l", "\x1b[?2026h\x1b[?1049l"},
		{"window size reports, not window moves", "a\x1b[14tb\x1b[18tc\x1b[22;0t\x1b[8;24;80t", "abc\x1b[22;0t\x1b[8;24;80t"},
		{"keyboard protocol and version queries", "a\x1b[?ub\x1b[>qc\x1b[>1u", "abc\x1b[>1u"},
		{"DECID and ENQ", "a\x1bZb\x05c", "abc"},
		{"colour queries, BEL or ST", "a\x1b]11;?\x07b\x1b]10;?\x1b\\c\x1b]4;1;?\x07d", "abcd"},
		{"clipboard read, not write", "a\x1b]52;c;?\x07b\x1b]52;c;aGk=\x07c", "ab\x1b]52;c;aGk=\x07c"},
		{"title and hyperlinks pass", "\x1b]0;my title\x07\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\", "\x1b]0;my title\x07\x1b]8;;http://x/\x1b\\link\x1b]8;;\x1b\\"},
		{"termcap and setting requests", "a\x1bP+q544e\x1b\\b\x1bP$qm\x1b\\c\x1bPother\x1b\\", "abc\x1bPother\x1b\\"},
		{"a long title passes whole", "\x1b]2;" + strings.Repeat("t", 100) + "\x07x", "\x1b]2;" + strings.Repeat("t", 100) + "\x07x"},
		{"ESC ESC", "\x1b\x1b[6nx", "\x1bx"},
		{"a string cut by a new sequence", "\x1b]0;t\x1b[6nx", "\x1b]0;tx"},
		{"a string too long for a query passes", "\x1b]11;?" + strings.Repeat("z", 300), "\x1b]11;?" + strings.Repeat("z", 300)},
	} {
		for _, step := range []int{1, 2, 3, 5, 1 << 20} {
			var q queryFilter
			var got []byte
			for in := tc.in; len(in) > 0; {
				n := min(step, len(in))
				got = q.filter(got, []byte(in[:n]))
				in = in[n:]
			}
			if string(got) != tc.want {
				t.Errorf("%s, in writes of %d bytes: %q, want %q", tc.name, step, got, tc.want)
			}
		}
	}
}
