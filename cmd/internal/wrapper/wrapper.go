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
// ($TMUX, $TMUX_PANE), on the pane's terminal (tty, out: the process's
// stdin and stdout). It returns the wrapper's exit status, or why it could
// not start.
func Run(ctx context.Context, store *tasks.Store, id string, env config.Env, tty, out *os.File) (int, error) {
	pane, err := tmux.ParsePaneID(env.TmuxPane)
	if err != nil {
		return 0, err
	}
	here := tasks.CallerAt(env.TmuxSocketFromTMUX(), string(pane))
	return store.Exec(ctx, tasks.ExecOptions{
		ID:      id,
		Server:  here.Server,
		TmuxEnv: env.Tmux,
		Term:    env.Term,
		Pane:    here.Pane,
		TTY:     tty,
		Out:     out,
	}), nil
}
