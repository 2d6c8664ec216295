package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/tasks"
)

// RmOptions are the parsed flags and arguments of `qtask rm`.
type RmOptions struct {
	IDs   []string
	Force bool
}

// NewCmdRm builds `qtask rm`.
func NewCmdRm(deps *Deps, runF func(context.Context, *RmOptions) error) *cobra.Command {
	opts := &RmOptions{}
	cmd := &cobra.Command{
		Use:   "rm ID...",
		Short: "Remove finished tasks and their output files",
		Long: `Remove finished tasks with their record, output file and notification. A
running task is refused (nothing is removed): stop it first, or give --force
to stop it and then remove it.`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRm(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Force, "force", "f", false, "stop running tasks first")
	return cmd
}

func runRm(ctx context.Context, deps *Deps, opts *RmOptions) error {
	cfg, store, err := deps.ConfigAndStore()
	if err != nil {
		return err
	}
	if opts.Force {
		for _, id := range opts.IDs {
			_, err := store.Stop(ctx, id, tasks.StopOptions{Grace: cfg.StopGrace})
			if err != nil && !errors.As(err, new(*tasks.NotRunningError)) {
				return err
			}
		}
	}
	removed, err := store.Remove(ctx, opts.IDs, launch.ForgetPanes(deps.Env.StateDir))
	for _, t := range removed {
		fmt.Fprintf(deps.IO.Out, "Removed task %s\n", displayValue(t.ID))
	}
	return err
}

// NewCmdRestart builds `qtask restart`.
func NewCmdRestart(deps *Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "restart ID",
		Short: "Start a finished task's command again, as a new background task",
		Long: `Start the command of a finished task again in the background, in the same
directory and with the same name, with your current environment. The new
task has a new id, printed as ` + "`qtask run --bg`" + ` prints it; the old one stays.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, t, err := deps.Task(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if t.Running() {
				return fmt.Errorf("task %s is still running: stop it first (qtask stop %s)", t.ID, t.ID)
			}
			if t.Kind == tasks.KindMonitor {
				// Its match and limits are not kept: a plain rerun would
				// be a shell task, not the monitor it was.
				return fmt.Errorf("task %s is a monitor: start a new one with qtask monitor", t.ID)
			}
			// Checked here: the start's own check words it as a bad --cwd
			// (a usage error), and restart has no --cwd to give.
			if fi, err := os.Stat(t.Cwd); err != nil || !fi.IsDir() {
				return fmt.Errorf("task %s ran in %q, which is no longer a directory: to run its command elsewhere, use qtask run --bg --cwd DIR", t.ID, t.Cwd)
			}
			return runRun(cmd.Context(), deps, &RunOptions{Command: t.Command, Name: t.Name, Cwd: t.Cwd, Background: true})
		},
	}
}
