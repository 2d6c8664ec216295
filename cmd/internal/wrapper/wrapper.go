// Package wrapper starts a task's wrapper in the pane tmux gave it: the one
// piece `qtask _exec` and the small qtask-exec binary share.
package wrapper

import (
	"context"
	"os"

	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

// Run runs task id's wrapper in this process's pane, which env describes
// ($TMUX, $TMUX_PANE), on the pane's terminal (stdin, stdout). It returns
// the wrapper's exit status, or why it could not start.
func Run(ctx context.Context, store *tasks.Store, id string, env config.Env) (int, error) {
	pane, err := tmux.ParsePaneID(env.TmuxPane)
	if err != nil {
		return 0, err
	}
	return store.Exec(ctx, tasks.ExecOptions{
		ID:      id,
		Server:  tmux.NewSocketServer(env.TmuxSocketFromTMUX()),
		TmuxEnv: env.Tmux,
		Pane:    pane,
		TTY:     os.Stdin,
		Out:     os.Stdout,
	}), nil
}
