package main

import (
	"bufio"
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// LsOptions are the parsed flags of `qtask ls`.
type LsOptions struct {
	JSON   bool
	Status string
	Scope  string
}

// NewCmdLs builds `qtask ls`.
func NewCmdLs(deps *Deps, runF func(context.Context, *LsOptions) error) *cobra.Command {
	opts := &LsOptions{}
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List tasks, oldest first",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runLs(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array of task objects")
	cmd.Flags().StringVar(&opts.Status, "status", "", "only tasks with this status: running, completed, failed, cancelled")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", "only tasks of this scope")
	return cmd
}

func runLs(ctx context.Context, deps *Deps, opts *LsOptions) error {
	var filter tasks.Filter
	if opts.Status != "" {
		st, err := tasks.ParseStatus(opts.Status)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("--status: %w", err)}
		}
		filter.Status = st
	}
	filter.Scope = opts.Scope
	store, err := deps.Store(ctx)
	if err != nil {
		return err
	}
	list, warnings, err := store.List(filter)
	if err != nil {
		return err
	}
	printWarnings(deps.IO.ErrOut, warnings)
	if opts.JSON {
		return writeJSON(deps.IO.Out, list)
	}
	if len(list) == 0 {
		fmt.Fprintln(deps.IO.Out, "No background tasks.")
		return nil
	}
	now := time.Now()
	// Buffered: tabwriter writes every cell on its own, a system call each.
	out := bufio.NewWriterSize(deps.IO.Out, 64<<10)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tRUNTIME\tCOMMAND\tOUTPUT")
	for _, t := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", displayValue(t.ID), displayCommand(t.StatusText(), 48),
			formatRuntime(t.Runtime(now)), displayCommand(t.Label(), 48), displayValue(t.OutputPath))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return out.Flush()
}
