package tmux

import "testing"

// Versions compare as numbers, and a build that names none counts as new.
func TestVersionAtLeast(t *testing.T) {
	for _, tc := range []struct {
		v            string
		major, minor int
		want         bool
	}{
		{"tmux 3.3a", 3, 2, true},
		{"tmux 3.2", 3, 2, true},
		{"tmux 3.1c", 3, 2, false},
		{"tmux 2.9a", 3, 2, false},
		{"tmux 4.0", 3, 2, true},
		{"tmux 3.10", 3, 9, true},
		{"tmux 3.10", 3, 11, false},
		{"tmux next-3.4", 3, 2, true},
		{"tmux master", 3, 2, true},
	} {
		if got := VersionAtLeast(tc.v, tc.major, tc.minor); got != tc.want {
			t.Errorf("VersionAtLeast(%q, %d, %d) = %v, want %v", tc.v, tc.major, tc.minor, got, tc.want)
		}
	}
}
