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

// A key as an option spells it is found in list-keys' lines however tmux
// escapes or spells it there.
func TestListedKey(t *testing.T) {
	for _, tc := range []struct{ line, option string }{
		{"bind-key    -T prefix T       run-shell -C x", "T"},
		{"bind-key -r -T prefix \\#      display-message hash", "#"},
		{"bind-key    -T prefix \\;      last-pane", ";"},
		{"bind-key    -T prefix M-p     display-message hi", "m-p"},
		{"bind-key    -T prefix C-g     display-message hi", "^g"},
		{"bind-key    -T prefix C-M-x   display-message hi", "c-m-x"},
	} {
		got, ok := listedKey(tc.line)
		if !ok || got != keyName(tc.option) {
			t.Errorf("listedKey(%q) = %q, %v; want it to match option %q (%q)", tc.line, got, ok, tc.option, keyName(tc.option))
		}
	}
	if _, ok := listedKey("no binding here"); ok {
		t.Error("listedKey found a key in a line that is not a binding")
	}
}
