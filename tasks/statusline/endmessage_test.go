package statusline

import (
	"testing"
	"time"
)

func TestShortLabel(t *testing.T) {
	if got := ShortLabel("make\x1b[31m\u202e all", 40); got != "make [31m  all" {
		t.Errorf("controls not blanked: %q", got)
	}
	if got := ShortLabel("abcdefghij", 5); got != "abcd…" {
		t.Errorf("cut: %q", got)
	}
}

// @qtask-notify-time is milliseconds; anything else is the default, never
// tmux's 750 ms display-time.
func TestNotifyTime(t *testing.T) {
	for value, want := range map[string]time.Duration{
		"":      defaultNotifyTime,
		"2500":  2500 * time.Millisecond,
		" 800 ": 800 * time.Millisecond,
		"0":     0, // until a key is pressed
		"-1":    defaultNotifyTime,
		"3s":    defaultNotifyTime,
		"lots":  defaultNotifyTime,
	} {
		if got := notifyTime(value); got != want {
			t.Errorf("@qtask-notify-time %q: %v, want %v", value, got, want)
		}
	}
}
