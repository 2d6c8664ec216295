package main

import (
	"context"
	"fmt"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/tmux/plugin"
)

// clientMessageWidth bounds a message on a client's status line (tmux
// cuts it at the client's width too): room for a fix such as
// `qtask init fish | source in ~/.config/fish/config.fish`.
const clientMessageWidth = 160

// reportToClient shows msg on a tmux client's status line, the way commands
// run from key bindings report: whatever run-shell's command prints opens
// view mode in the user's pane, where the next keystrokes go nowhere, and a
// non-zero exit prints "returned 1" there. So nothing is printed and the
// exit is 0, unless even the message could not be shown.
func reportToClient(ctx context.Context, deps *Deps, client, msg string) error {
	if err := plugin.Say(ctx, launch.Server(deps.Env), client, displayCommand(msg, clientMessageWidth)); err != nil {
		return fmt.Errorf("show %q on tmux client %s: %w", msg, client, err)
	}
	return nil
}
