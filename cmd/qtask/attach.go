package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

// AttachOptions are the parsed flags and argument of `qtask attach`.
type AttachOptions struct {
	ID   string
	Here bool
}

// NewCmdAttach builds `qtask attach` (alias fg).
func NewCmdAttach(deps *Deps, runF func(context.Context, *AttachOptions) error) *cobra.Command {
	opts := &AttachOptions{}
	cmd := &cobra.Command{
		Use:     "attach ID",
		Aliases: []string{"fg"},
		Short:   "Bring a running task's pane into view",
		Long: `Bring a running task's pane into view. Inside tmux, switch the current client
to it (or, with --here, join it into the current window beside you). Outside
tmux, attach this terminal to the task's server showing it.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runAttach(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Here, "here", false, "join the task's pane into the current window")
	return cmd
}

func runAttach(ctx context.Context, deps *Deps, opts *AttachOptions) error {
	store, t, err := deps.ViewTask(ctx, opts.ID)
	if err != nil {
		return err
	}
	if !t.Running() {
		return &tasks.NotRunningError{Task: t}
	}
	if t.PaneID == "" {
		return fmt.Errorf("task %s has no tmux pane yet; try again in a moment", t.ID)
	}
	server, err := store.ServerOf(t)
	if err != nil {
		return err
	}
	pane := tmux.PaneID(t.PaneID)
	inside := deps.Env.TmuxPane != ""
	if inside && server.String() != deps.Server().String() {
		return fmt.Errorf("task %s runs on another tmux server; from outside tmux run `qtask attach %s`, or `tmux %s attach`",
			t.ID, t.ID, strings.Join(server.Args(), " "))
	}
	switch {
	case opts.Here && !inside:
		return usageErrorf("attach --here works inside tmux only")
	case opts.Here:
		return server.JoinHere(ctx, pane, tmux.PaneID(deps.Env.TmuxPane))
	case inside:
		if err := server.SwitchTo(ctx, pane); err != nil {
			return err
		}
		fmt.Fprintf(deps.IO.ErrOut, "qtask: showing task %s; prefix L goes back to where you were\n", displayValue(t.ID))
		return nil
	}
	fmt.Fprintf(deps.IO.ErrOut, "qtask: attaching to task %s; detach with prefix d\n", displayValue(t.ID))
	return server.Attach(ctx, pane, deps.Environ)
}
