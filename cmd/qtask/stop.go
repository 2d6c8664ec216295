package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// StopOptions are the parsed flags and arguments of `qtask stop`.
type StopOptions struct {
	IDs   []string
	All   bool
	Grace *time.Duration // nil: the configured stop_grace; 0 is SIGKILL at once
}

// NewCmdStop builds `qtask stop`.
func NewCmdStop(deps *Deps, runF func(context.Context, *StopOptions) error) *cobra.Command {
	opts := &StopOptions{}
	var grace time.Duration
	cmd := &cobra.Command{
		Use:   "stop ID... | --all",
		Short: "Stop tasks: SIGTERM to the whole process group, SIGKILL after a grace",
		Args:  minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if opts.All == (len(args) > 0) {
				return usageErrorf("stop: give task ids or --all, not both or neither")
			}
			if cmd.Flags().Changed("grace") {
				if grace < 0 {
					return usageErrorf("--grace must not be negative")
				}
				opts.Grace = &grace
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runStop(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.All, "all", false, "stop every running task")
	durationVar(cmd.Flags(), &grace, "grace", 0, "time between SIGTERM and SIGKILL (default: stop_grace from config, 2s)")
	return cmd
}

func runStop(ctx context.Context, deps *Deps, opts *StopOptions) error {
	var grace time.Duration
	if opts.Grace != nil {
		grace = *opts.Grace
	} else {
		cfg, err := deps.Config()
		if err != nil {
			return err
		}
		grace = cfg.StopGrace
	}
	store, err := deps.OpenTasks()
	if err != nil {
		return err
	}
	stop := tasks.StopOptions{Grace: grace}
	var results []tasks.StopResult
	if opts.All {
		if results, err = store.StopAll(ctx, stop); err != nil {
			return err
		}
		if len(results) == 0 {
			fmt.Fprintln(deps.IO.Out, "No running tasks.")
			return nil
		}
	} else {
		results = store.StopMany(ctx, opts.IDs, stop)
	}
	var failed error
	for _, res := range results {
		t, err := res.Task, res.Err
		var notRunning *tasks.NotRunningError
		switch {
		case errors.As(err, &notRunning):
			fmt.Fprintf(deps.IO.Out, "Task %s already ended: %s\n", displayValue(notRunning.Task.ID), displayCommand(notRunning.Task.StatusText(), 200))
		case err != nil:
			fmt.Fprintf(deps.IO.ErrOut, "qtask: %s\n", displayCommand(err.Error(), maxErrorWidth))
			failed = &ExitError{Code: exitError}
		default:
			fmt.Fprintf(deps.IO.Out, "Stopped task %s: %s\n", displayValue(t.ID), displayCommand(t.StatusText(), 200))
		}
	}
	return failed
}
