package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// AttachOptions are the parsed flags and argument of `qtask attach`.
type AttachOptions struct {
	ID     string
	Here   bool
	Client string // the tmux client to switch; "" the current one
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
tmux, attach this terminal to the task's server showing it. A failed task's
pane kept by keep_failed_pane is shown the same way; it closes once you leave it.`,
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
	cmd.Flags().StringVar(&opts.Client, "tmux-client", "", "inside tmux, switch this client (as list-clients names it) rather than the current one (for popups and key bindings)")
	return cmd
}

func runAttach(ctx context.Context, deps *Deps, opts *AttachOptions) error {
	store, t, err := deps.ViewTask(ctx, opts.ID)
	if err != nil {
		return err
	}
	show, err := store.Show(t, tasks.ShowOptions{Caller: deps.Caller(), Here: opts.Here, Env: deps.Environ, InTmux: deps.tmuxServer(), Client: opts.Client})
	if err != nil {
		return err
	}
	id := displayValue(t.ID)
	if show.Way == tasks.ShowAttach {
		fmt.Fprintf(deps.IO.ErrOut, "qtask: attaching to task %s; detach with prefix d\n", id)
	}
	if err := show.Do(ctx); err != nil {
		return err
	}
	if show.Way == tasks.ShowSwitch {
		back := "prefix L goes back to the session you were in"
		if show.SameSession {
			back = "prefix l goes back to the window you were in"
		}
		fmt.Fprintf(deps.IO.ErrOut, "qtask: showing task %s; %s\n", id, back)
	}
	return nil
}
