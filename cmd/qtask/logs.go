package main

import (
	"context"
	"errors"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks/output"
)

// LogsOptions are the parsed flags and argument of `qtask logs`.
type LogsOptions struct {
	ID     string
	Offset int64
	Limit  int64
	Tail   int
	Follow bool
	Raw    bool
}

// NewCmdLogs builds `qtask logs`.
func NewCmdLogs(deps *Deps, runF func(context.Context, *LogsOptions) error) *cobra.Command {
	opts := &LogsOptions{Tail: -1}
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a task's clean output",
		Long: `Print the task's output file: what the task's pane showed, as tmux renders
it, without colours: progress bars and spinners end as their last frame.
--follow keeps printing as output arrives and exits when the task ends; on a
terminal it also shows the line still being redrawn and replaces it in place,
while into a pipe it prints only lines that will not change.

--raw prints instead what the pane received, escapes and colours included,
for a terminal to replay: qtask keeps that copy only for tasks started with
keep_raw_output = true in the config (capped as the output file is), and
says so when a task has none.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if opts.Offset < 0 || opts.Limit < 0 {
				return usageErrorf("--offset and --limit must not be negative")
			}
			if cmd.Flags().Changed("tail") && opts.Tail < 0 {
				return usageErrorf("--tail must not be negative (it counts lines from the end)")
			}
			if opts.Tail >= 0 && (opts.Offset > 0 || opts.Limit > 0) {
				return usageErrorf("--tail cannot be combined with --offset or --limit")
			}
			if opts.Raw && (opts.Follow || opts.Tail >= 0 || opts.Offset > 0 || opts.Limit > 0) {
				return usageErrorf("--raw prints the whole raw copy: it cannot be combined with --follow, --tail, --offset or --limit")
			}
			if opts.Follow && opts.Limit > 0 {
				return usageErrorf("--follow cannot be combined with --limit")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runLogs(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().Int64Var(&opts.Offset, "offset", 0, "start at this byte offset")
	cmd.Flags().Int64Var(&opts.Limit, "limit", 0, "print at most this many bytes")
	cmd.Flags().IntVarP(&opts.Tail, "tail", "n", -1, "print only the last `LINES` lines (default: all)")
	// -1 means "not given"; help must not show that placeholder.
	cmd.Flags().Lookup("tail").DefValue = "0"
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new output until the task ends")
	cmd.Flags().BoolVar(&opts.Raw, "raw", false, "print the bytes the pane received, escapes included (needs keep_raw_output)")
	return cmd
}

func runLogs(ctx context.Context, deps *Deps, opts *LogsOptions) error {
	store, t, err := deps.ViewTask(ctx, opts.ID)
	if err != nil {
		return err
	}
	out := deps.IO.Out
	if opts.Raw {
		return store.WriteRawOutput(t, out)
	}
	offset := opts.Offset
	file := output.File{Task: t.ID, Path: t.OutputPath}
	switch {
	case opts.Tail >= 0 && !opts.Follow:
		_, err := file.WriteTail(out, opts.Tail)
		return err
	case opts.Tail >= 0:
		n, err := file.WriteSettledTail(out, opts.Tail)
		if err != nil {
			return err
		}
		offset = n
	case !opts.Follow:
		return file.Read(out, opts.Offset, opts.Limit)
	}
	err = store.Follow(ctx, t, out, offset, terminalWidth(out))
	if errors.Is(err, context.Canceled) {
		return nil // Ctrl+C ends a follow; that is not an error
	}
	return err
}
