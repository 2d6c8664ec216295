package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/tasks/statusline"
)

// StatusLineOptions are the parsed flags of `qtask status-line`.
type StatusLineOptions struct {
	Format string // "" means status_format from config
}

// NewCmdStatusLine builds `qtask status-line`, the status segment for
// `#(qtask status-line)` users; the plugin's users get the same text free
// in #{@qtask_status}.
func NewCmdStatusLine(deps *Deps, runF func(context.Context, *StatusLineOptions) error) *cobra.Command {
	opts := &StatusLineOptions{}
	cmd := &cobra.Command{
		Use:   "status-line [--format F]",
		Short: "Print the tmux status segment: running tasks and unseen failures",
		Long: `Print the status segment qtask also keeps in the tmux option @qtask_status:
{running} is the number of running tasks, {failed} the failed background
tasks nobody has looked at (with status, logs or attach) or removed. Each
space-separated part of the format is shown only when a count it names is
not zero, so the segment is empty when idle. Default format: status_format
from config, "⏵{running} ✗{failed}".

#{@qtask_status} in status-right costs nothing per refresh; #(qtask
status-line) runs this command.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("format") {
				if problem := config.CheckStatusFormat(opts.Format); problem != "" {
					return usageErrorf("--format %s", problem)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runStatusLine(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "", `status format with {running} and {failed} (default: status_format from config)`)
	return cmd
}

func runStatusLine(ctx context.Context, deps *Deps, opts *StatusLineOptions) error {
	cfg, store, err := deps.ConfigAndStore()
	if err != nil {
		return err
	}
	format := cfg.StatusFormat
	if opts.Format != "" {
		format = opts.Format
	}
	counts, err := store.Counts()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(deps.IO.Out, statusline.Format(format, counts))
	return err
}
