package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/retention"
)

// PruneOptions are the parsed flags of `qtask prune`.
type PruneOptions struct {
	OlderThan   time.Duration // 0: not given
	AllFinished bool
	DryRun      bool
	JSON        bool
}

// NewCmdPrune builds `qtask prune`.
func NewCmdPrune(deps *Deps, runF func(context.Context, *PruneOptions) error) *cobra.Command {
	opts := &PruneOptions{}
	cmd := &cobra.Command{
		Use:   "prune [--older-than AGE | --all-finished] [--dry-run]",
		Short: "Remove finished tasks and their output files",
		Long: `Remove finished tasks with everything that belongs to them: the record, the
output file, a notification nobody read and any shell-hook file left for
their pane. Running tasks are never removed.

Without flags, prune keeps the newest keep_finished finished tasks (from the
config, default 200; 0 keeps all), as every qtask run does by itself.`,
		Example: `  qtask prune --dry-run
  qtask prune --older-than 7d
  qtask prune --all-finished`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("older-than") {
				if opts.OlderThan <= 0 {
					return argsError(cmd, "--older-than must be more than zero")
				}
				if opts.AllFinished {
					return usageErrorf("prune: give --older-than or --all-finished, not both")
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPrune(cmd.Context(), deps, opts)
		},
	}
	durationVar(cmd.Flags(), &opts.OlderThan, "older-than", 0, "remove finished tasks that ended longer ago than AGE (e.g. 90m, 12h, 7d)")
	cmd.Flags().BoolVar(&opts.AllFinished, "all-finished", false, "remove every finished task")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "show what would be removed; remove nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the removed tasks as a JSON array of task objects")
	return cmd
}

func runPrune(ctx context.Context, deps *Deps, opts *PruneOptions) error {
	cfg, store, err := deps.ConfigAndStore()
	if err != nil {
		return err
	}
	pruned, warnings, err := store.Prune(ctx, tasks.PruneOptions{
		Rule:   retention.Rule{Keep: cfg.KeepFinished, OlderThan: opts.OlderThan, All: opts.AllFinished},
		DryRun: opts.DryRun,
		Forget: launch.ForgetPanes(deps.Env.StateDir),
	})
	printWarnings(deps.IO.ErrOut, warnings)
	if opts.JSON {
		if pruned == nil {
			pruned = []*tasks.Task{}
		}
		if jerr := writeJSON(deps.IO.Out, pruned); err == nil {
			err = jerr
		}
		return err
	}
	verb := "Removed"
	if opts.DryRun {
		verb = "Would remove"
	}
	for _, t := range pruned {
		fmt.Fprintf(deps.IO.Out, "%s task %s: %s\n", verb, displayCommand(t.ID, 16), displayCommand(t.Label(), 72))
	}
	if len(pruned) == 0 && err == nil {
		fmt.Fprintln(deps.IO.Out, "Nothing to prune.")
	}
	return err
}
