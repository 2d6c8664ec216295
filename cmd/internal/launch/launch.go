// Package launch is how tasks start from a process, for the two programs
// that start them: qtask, and qtask-mcp, its MCP server, which is a program
// of its own so that the MCP SDK's start-up is not paid by every qtask
// command (docs/BENCHMARKS.md, run-bg).
package launch

import (
	"context"

	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/shellhooks"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tmux"
)

// Server is the tmux server qtask works on: $QTASK_TMUX_SOCKET, else the
// server of $TMUX, else qtask's own (tmux -L qtask in $TMUX_TMPDIR).
func Server(env config.Env) tmux.Server {
	return tmux.SelectServer(env.TmuxSocket, env.TmuxSocketFromTMUX(), env.TmuxTmpdir)
}

// InTmux is the server of $TMUX, nil outside tmux. Unlike tasks.CallerAt
// it is set where tmux runs qtask without a pane (a display-popup).
func InTmux(env config.Env) *tmux.Server {
	socket := env.TmuxSocketFromTMUX()
	if socket == "" {
		return nil
	}
	server := tmux.NewSocketServer(socket)
	return &server
}

// OpenStore opens the state directory the environment names, creating a
// default one only inside a home that exists (see statefs.Home).
func OpenStore(env config.Env) (*tasks.Store, error) {
	return tasks.OpenStoreIn(env.StateDir, statefs.Home{Dir: env.StateHome, Var: env.StateHomeVar, Create: env.StateHomeVar == "XDG_STATE_HOME"})
}

// StartOptions is what every start from this process shares: the caller's
// environment (environ), scope (Scope, asked of store) and place, the
// configured shell, session, output cap, stop grace and retention. self is
// the qtask binary, whose directory holds the wrapper.
func StartOptions(cfg config.Config, env config.Env, environ []string, self string, store *tasks.Store) tasks.StartOptions {
	opts := tasks.StartOptions{
		Env:            environ,
		Scope:          env.Scope,
		Shell:          cfg.Shell,
		Session:        cfg.Session,
		Server:         Server(env),
		Self:           self,
		OutputMaxBytes: cfg.OutputMaxBytes,
		KeepFullScreen: cfg.KeepFullScreen,
		KeepFailedPane: cfg.KeepFailedPane,
		KeepRawOutput:  cfg.KeepRawOutput,
		StatusFormat:   cfg.StatusFormat,
		StopGrace:      cfg.StopGrace,
		KeepFinished:   cfg.KeepFinished,
		Forget:         ForgetPanes(env.StateDir),
		Caller:         tasks.CallerAt(env.TmuxSocketFromTMUX(), env.TmuxPane),
	}
	if scope, noted := Scope(env, store); noted {
		opts = opts.InScope(scope)
	}
	return opts
}

// Scope is whose the tasks this process starts are, and whose
// notifications it reads: the scope the environment names ($QTASK_SCOPE,
// the agent session), else the session noted for the agent process it
// runs under (gemini-cli names none to its shell tool:
// tasks.Store.AgentProcessScope), else the person's place (the tmux
// pane, or "default"). noted is true for the second: the environment did
// not name it, so the tasks must be given it (tasks.StartOptions.InScope).
func Scope(env config.Env, store *tasks.Store) (scope string, noted bool) {
	if env.ChosenScope == "" && env.AgentSession == "" {
		if s := store.AgentProcessScope(); s != "" {
			return s, true
		}
	}
	return env.Scope, false
}

// AgentScope is the scope of the coding agent this process works for, ""
// when it works for a person: what Scope says, but never the place.
func AgentScope(env config.Env, store *tasks.Store) string {
	if len(env.AgentScopes()) > 0 {
		return env.Scope
	}
	return store.AgentProcessScope()
}

// ForgetPanes drops what the shell hooks know of a pruned task's pane.
func ForgetPanes(stateDir string) func(*tasks.Task) {
	dir := shellhooks.Dir(stateDir)
	return func(t *tasks.Task) { shellhooks.Forget(dir, t) }
}

// AutoPrune keeps the newest keep finished tasks (as every start does), and
// returns what it could not do, as warnings: the task has started either
// way.
func AutoPrune(ctx context.Context, store *tasks.Store, keep int, stateDir string) []string {
	return store.AutoPruneWarnings(ctx, keep, ForgetPanes(stateDir))
}
