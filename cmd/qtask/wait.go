package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// WaitOptions are the parsed flags and arguments of `qtask wait`.
type WaitOptions struct {
	IDs []string
	// Timeout is nil to wait for as long as it takes; 0 checks once.
	Timeout *time.Duration
}

// NewCmdWait builds `qtask wait`.
func NewCmdWait(deps *Deps, runF func(context.Context, *WaitOptions) error) *cobra.Command {
	opts := &WaitOptions{}
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait ID...",
		Short: "Block until tasks end; exit with the task's exit code",
		Long: `Block until every named task has ended. With one task, exit with its exit
code; with several, exit 0 if all completed and 1 otherwise. If --timeout
passes first, exit 124; --timeout 0 checks once and returns at once.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if cmd.Flags().Changed("timeout") {
				if timeout < 0 {
					return usageErrorf("--timeout must not be negative")
				}
				opts.Timeout = &timeout
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runWait(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up after this long and exit 124; 0: check once (default: wait forever)")
	return cmd
}

func runWait(ctx context.Context, deps *Deps, opts *WaitOptions) error {
	if opts.Timeout != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *opts.Timeout)
		defer cancel()
	}
	store, err := deps.Store(ctx)
	if err != nil {
		return err
	}
	list, err := store.Wait(ctx, opts.IDs)
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintf(deps.IO.ErrOut, "qtask: timed out after %s; still running:", *opts.Timeout)
		for _, t := range list {
			if t.Running() {
				fmt.Fprintf(deps.IO.ErrOut, " %s", displayValue(t.ID))
			}
		}
		fmt.Fprintln(deps.IO.ErrOut)
		return &ExitError{Code: exitTimeout}
	}
	if err != nil {
		return err
	}
	for _, t := range list {
		fmt.Fprintf(deps.IO.Out, "%s %s\n", displayValue(t.ID), displayCommand(t.StatusText(), 200))
	}
	if code := waitExitCode(list); code != exitOK {
		return &ExitError{Code: code}
	}
	return nil
}

// waitExitCode: one task passes its own exit code through (1 if it has
// none, e.g. lost); several give 0 only if all completed.
func waitExitCode(list []*tasks.Task) int {
	if len(list) == 1 {
		t := list[0]
		if t.ExitCode == nil {
			return exitError
		}
		return *t.ExitCode
	}
	for _, t := range list {
		if t.Status != tasks.StatusCompleted {
			return exitError
		}
	}
	return exitOK
}
