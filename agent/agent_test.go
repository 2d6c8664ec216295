package agent

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLongRunningHint(t *testing.T) {
	const out = "/home/me/.local/state/qtask/out/ab12cd34 with space.log"
	cases := []struct {
		ran, timeout time.Duration
		secs         int // -1: no hint
	}{
		{0, 0, -1},
		{999 * time.Millisecond, 0, -1},
		{time.Second, 0, 1},
		{1499 * time.Millisecond, 0, 1},
		{1500 * time.Millisecond, 0, 2},
		{2 * time.Hour, 0, 7200},
		{900 * time.Millisecond, time.Second, -1},
		{time.Second, time.Second, 1},
		{999 * time.Millisecond, 1500 * time.Millisecond, -1},
		{time.Second, 1500 * time.Millisecond, 1},
		{1499 * time.Millisecond, 3 * time.Second, -1},
		{1500 * time.Millisecond, 3 * time.Second, 2},
		{4999 * time.Millisecond, 10 * time.Second, -1},
		{5 * time.Second, 10 * time.Second, 5},
		{59900 * time.Millisecond, 2 * time.Minute, -1},
		{90 * time.Second, 2 * time.Minute, 90},
		{3 * time.Second, -time.Minute, 3},
	}
	hints := map[string]func(ran, timeout time.Duration, outputPath string) string{
		"LongRunningHint": LongRunningHint,
		"AgentLongRunningHint": func(ran, timeout time.Duration, outputPath string) string {
			return AgentLongRunningHint("qtask", ran, timeout, outputPath)
		},
	}
	for fn, hintFor := range hints {
		for _, tc := range cases {
			hint := hintFor(tc.ran, tc.timeout, out)
			name := fmt.Sprintf("%s: a command that ran %v with timeout %v", fn, tc.ran, tc.timeout)
			if tc.secs < 0 {
				if hint != "" {
					t.Errorf("%s got a long-running note it is not due: %q", name, hint)
				}
				continue
			}
			if hint == "" {
				t.Errorf("%s got no long-running note", name)
				continue
			}
			for _, want := range []string{
				fmt.Sprintf("ran for %ds.", tc.secs),
				"`qtask run --bg",
				"do not re-run",
			} {
				if !strings.Contains(hint, want) {
					t.Errorf("%s: the note lacks %q: %q", name, want, hint)
				}
			}
			if !strings.HasSuffix(hint, out) {
				t.Errorf("%s: the note does not end with the output path %q: %q", name, out, hint)
			}
		}
	}
}
