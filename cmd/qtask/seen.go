package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// SeenOptions are the parsed flags and arguments of `qtask seen`.
type SeenOptions struct {
	IDs []string
	All bool
}

// NewCmdSeen builds `qtask seen`.
func NewCmdSeen(deps *Deps, runF func(context.Context, *SeenOptions) error) *cobra.Command {
	opts := &SeenOptions{}
	cmd := &cobra.Command{
		Use:   "seen ID... | --all",
		Short: "Clear failed tasks from the status line's count of unseen failures",
		Long: `Mark failed tasks as seen, so the status segment (✗N, @qtask_status) stops
counting them, without looking at each: the given tasks, or with --all every
failure not yet seen. Looking at a task (status, logs, attach) marks it too.
Prints nothing; a task that is not an unseen failure is left as it is.`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if opts.All == (len(args) > 0) {
				return usageErrorf("seen: give task ids or --all, not both or neither")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSeen(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "every failed task not yet seen")
	return cmd
}

func runSeen(ctx context.Context, deps *Deps, opts *SeenOptions) error {
	store, err := deps.Store()
	if err != nil {
		return err
	}
	var list []*tasks.Task
	if opts.All {
		if list, _, err = store.List(ctx, tasks.Filter{Status: tasks.StatusFailed}); err != nil {
			return err
		}
	} else {
		for _, id := range opts.IDs {
			t, err := store.Get(ctx, id)
			if err != nil {
				return err
			}
			list = append(list, t)
		}
	}
	for _, t := range list {
		if err := store.MarkSeen(t); err != nil {
			return err
		}
	}
	return nil
}
