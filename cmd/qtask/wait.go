package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// WaitOptions are the parsed flags and arguments of `qtask wait`.
type WaitOptions struct {
	IDs []string
	// Timeout is nil to wait for as long as it takes; 0 checks once.
	Timeout *time.Duration
	// Until, when set, waits for a line of the one task's output matching
	// it instead of for the task's end.
	Until *regexp.Regexp
}

// NewCmdWait builds `qtask wait`.
func NewCmdWait(deps *Deps, runF func(context.Context, *WaitOptions) error) *cobra.Command {
	opts := &WaitOptions{}
	var timeout time.Duration
	var until string
	cmd := &cobra.Command{
		Use:   "wait ID...",
		Short: "Block until tasks end; exit with the task's exit code",
		Long: `Block until every named task has ended. With one task, exit with its exit
code; with several, exit 0 if all completed and 1 otherwise. If --timeout
passes first, exit 124; --timeout 0 checks once and returns at once.

With --until REGEX, wait instead until a line of the task's output matches
REGEX (Go syntax, searched anywhere in the line; lines printed before the
wait began count), print that line and exit 0. If the task ends first, exit
4; if --timeout passes first, exit 124; either way with one line saying
which and the last lines of output. The task is never touched.`,
		Example: `  qtask wait 3f9a
  qtask wait --timeout 10m 3f9a b7e0
  qtask wait 3f9a --until 'listening on' --timeout 1m`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if cmd.Flags().Changed("timeout") {
				if timeout < 0 {
					return usageErrorf("--timeout must not be negative")
				}
				opts.Timeout = &timeout
			}
			if cmd.Flags().Changed("until") {
				if len(args) > 1 {
					return argsError(cmd, "--until waits for one task's output: give one task ID, not %d", len(args))
				}
				re, err := compileGate(cmd, "--until", until)
				if err != nil {
					return err
				}
				opts.Until = re
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runWait(cmd.Context(), deps, opts)
		},
	}
	durationVar(cmd.Flags(), &timeout, "timeout", 0, "give up after this long and exit 124; 0: check once (default: wait forever)")
	cmd.Flags().StringVar(&until, "until", "", "wait until a line of the task's output matches this regular expression (exit 4 if it ends first)")
	return cmd
}

func runWait(ctx context.Context, deps *Deps, opts *WaitOptions) error {
	if opts.Until != nil {
		return runWaitUntil(ctx, deps, opts)
	}
	if opts.Timeout != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *opts.Timeout)
		defer cancel()
	}
	store, err := deps.OpenTasks()
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

// waitExitCode: one task passes its own exit code through (0 for a
// monitor that completed by ending itself, 1 for any other task without
// one, e.g. lost); several give 0 only if all completed.
func waitExitCode(list []*tasks.Task) int {
	if len(list) == 1 {
		t := list[0]
		if t.ExitCode == nil && t.Status == tasks.StatusCompleted {
			return exitOK
		}
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

// runWaitUntil is `wait ID --until REGEX`: a readiness gate on a task that
// is already running.
func runWaitUntil(ctx context.Context, deps *Deps, opts *WaitOptions) error {
	store, err := deps.OpenTasks()
	if err != nil {
		return err
	}
	gate := tasks.ReadyOptions{Pattern: opts.Until, Timeout: -1}
	if opts.Timeout != nil {
		gate.Timeout = *opts.Timeout
	}
	res, err := store.AwaitReady(ctx, opts.IDs[0], gate)
	if err != nil {
		return err
	}
	if res.Outcome != tasks.Ready {
		return reportNotReady(deps, res, gate)
	}
	fmt.Fprintf(deps.IO.Out, "%s %s\n", displayValue(res.Task.ID), readyText(res, gate))
	return nil
}
