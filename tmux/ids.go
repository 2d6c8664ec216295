package tmux

import (
	"fmt"
	"strconv"
)

// PaneID is a tmux pane id such as "%12". Pane ids are stable for the life of
// the pane and survive break-pane/join-pane, so qtask records them.
type PaneID string

// SessionID is a tmux session id such as "$3".
type SessionID string

// WindowID is a tmux window id such as "@7".
type WindowID string

// ParsePaneID accepts exactly "%" followed by decimal digits.
func ParsePaneID(s string) (PaneID, error) {
	if err := checkID(s, '%'); err != nil {
		return "", fmt.Errorf("invalid pane id %q: want %%N, e.g. %%3: %w", s, err)
	}
	return PaneID(s), nil
}

// ParseSessionID accepts exactly "$" followed by decimal digits.
func ParseSessionID(s string) (SessionID, error) {
	if err := checkID(s, '$'); err != nil {
		return "", fmt.Errorf("invalid session id %q: want $N: %w", s, err)
	}
	return SessionID(s), nil
}

// ParseWindowID accepts exactly "@" followed by decimal digits.
func ParseWindowID(s string) (WindowID, error) {
	if err := checkID(s, '@'); err != nil {
		return "", fmt.Errorf("invalid window id %q: want @N: %w", s, err)
	}
	return WindowID(s), nil
}

func checkID(s string, sigil byte) error {
	if len(s) < 2 || s[0] != sigil {
		return fmt.Errorf("missing %q prefix", sigil)
	}
	if _, err := strconv.ParseUint(s[1:], 10, 32); err != nil {
		return fmt.Errorf("not a number")
	}
	return nil
}
