package capture

import (
	"testing"

	"github.com/qtask/qtask/tmux"
)

func TestSplitSnapshot(t *testing.T) {
	snap := tmux.PaneSnapshot{History: []string{"$ make", "cc a.c  "}, Screen: []string{"cc b.c", "[50%]", ""}, CursorX: 5, CursorY: 1}
	for _, tc := range []struct {
		start      int
		wantFinal  string
		wantHidden int
	}{
		{0, "$ make\ncc a.c\n", 0},
		{1, "cc a.c\n", 0},
		{3, "", 1}, // the echo was on the screen: its rows are hidden
		{5, "", 3},
	} {
		final, seed := SplitSnapshot(snap, tc.start)
		if final != tc.wantFinal || seed.Hidden != tc.wantHidden || len(seed.Rows) != 3 || seed.CursorX != 5 || seed.CursorY != 1 {
			t.Errorf("start %d: final %q, seed %+v; want final %q, %d hidden rows of 3, cursor 5,1", tc.start, final, seed, tc.wantFinal, tc.wantHidden)
		}
	}
}
