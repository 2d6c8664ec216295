package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/shellhooks"
	"github.com/qtask/qtask/tmux/plugin"
)

// InitOptions is the parsed argument of `qtask init`.
type InitOptions struct {
	Target string // bash, zsh or fish (print its hooks), or tmux (bind the keys)
}

// NewCmdInit builds `qtask init bash|zsh|fish|tmux`.
func NewCmdInit(deps *Deps, runF func(context.Context, *InitOptions) error) *cobra.Command {
	opts := &InitOptions{}
	return &cobra.Command{
		Use:   "init bash|zsh|fish|tmux",
		Short: "Print shell hooks, or bind qtask's keys in tmux",
		Long: `Print the shell hooks for bash, zsh or fish. With them loaded, pressing the
promote key (or running qtask promote) in a pane where a command you typed is
running moves that command to the background task list; a fresh shell takes
its place. Add to your shell's startup file:

  bash (~/.bashrc):                eval "$(qtask init bash)"
  zsh  (~/.zshrc):                 eval "$(qtask init zsh)"
  fish (~/.config/fish/config.fish): qtask init fish | source

The hooks cost a single builtin file write per command, start no process
and print nothing.

` + "`qtask init tmux`" + ` binds qtask's keys in the tmux server it runs under (the
plugin, scripts/qtask.tmux, runs it): prefix B (option @qtask-promote-key)
promotes the task of the pane you are in. Running it again changes nothing.`,
		Args:      exactArgs(1),
		ValidArgs: append(append([]string{}, shellhooks.Shells...), "tmux"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Target = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runInit(cmd.Context(), deps, opts)
		},
	}
}

func runInit(ctx context.Context, deps *Deps, opts *InitOptions) error {
	if opts.Target == "tmux" {
		return runInitTmux(ctx, deps)
	}
	snippet, err := shellhooks.Snippet(opts.Target, deps.Self, deps.Env.StateDir)
	if err != nil {
		return &UsageError{Err: fmt.Errorf("init: %w", err)}
	}
	if _, err := deps.Store(); err != nil {
		return err
	}
	if err := shellhooks.Prepare(deps.Env.StateDir); err != nil {
		return err
	}
	_, err = fmt.Fprint(deps.IO.Out, strings.TrimLeft(snippet, "\n"))
	return err
}

// runInitTmux binds the plugin's keys and sets the status segment to the
// counts as they are, so #{@qtask_status} is right from the first load.
func runInitTmux(ctx context.Context, deps *Deps) error {
	server := launch.Server(deps.Env)
	if _, err := plugin.Install(ctx, server, deps.Self); err != nil {
		return err
	}
	cfg, store, err := deps.ConfigAndStore()
	if err != nil {
		return err
	}
	return store.RefreshStatus(server, cfg.StatusFormat)
}
