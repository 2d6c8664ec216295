package plugin

import "testing"

func TestMenuStyle(t *testing.T) {
	tests := []struct{ option, version, want string }{
		{"", "tmux 3.3a", MenuPopup},
		{"", "tmux 3.2", MenuPopup},
		{"", "tmux 3.1c", MenuTmux},
		{"", "tmux 3.0a", MenuTmux},
		{"", "tmux 2.9", MenuTmux},
		{"", "tmux 10.1", MenuPopup},
		{"", "tmux next-3.5", MenuPopup},
		{"", "tmux master", MenuPopup},
		{"", "", MenuPopup},
		{"menu", "tmux 3.3a", MenuTmux},
		{" popup ", "tmux 3.1", MenuPopup},
		{"auto", "tmux 3.1", MenuTmux},
	}
	for _, tt := range tests {
		if got := MenuStyle(tt.option, tt.version); got != tt.want {
			t.Errorf("MenuStyle(%q, %q) = %q, want %q", tt.option, tt.version, got, tt.want)
		}
	}
}
