package main

import (
	"bufio"
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// LsOptions are the parsed flags of `qtask ls`.
type LsOptions struct {
	JSON   bool
	Status string
	Scope  string
	Wide   bool // the OUTPUT column, and nothing cut to the terminal's width
	Quiet  bool // ids only
}

// NewCmdLs builds `qtask ls`.
func NewCmdLs(deps *Deps, runF func(context.Context, *LsOptions) error) *cobra.Command {
	opts := &LsOptions{}
	var output string
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List tasks, oldest first",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch output {
			case "":
			case "wide":
				opts.Wide = true
			default:
				return usageErrorf("-o %q: the only output format is wide (or use --json)", output)
			}
			if err := opts.checkFormat(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runLs(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array of task objects")
	cmd.Flags().StringVar(&opts.Status, "status", "", "only tasks with this status: running, completed, failed, cancelled")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", "only tasks of this scope")
	cmd.Flags().BoolVar(&opts.Wide, "wide", false, "add the OUTPUT column and cut nothing to the terminal's width")
	cmd.Flags().StringVarP(&output, "output", "o", "", "wide: same as --wide")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print task ids only, one a line (for xargs)")
	return cmd
}

// checkFormat refuses two output formats at once: each prints the list
// its own way, and all but one would be silently ignored (`--json -q`
// printed JSON).
func (opts *LsOptions) checkFormat(cmd *cobra.Command) error {
	var given []string
	for _, f := range []struct {
		on   bool
		name string
	}{{opts.JSON, "--json"}, {opts.Quiet, "-q"}, {opts.Wide, "--wide"}} {
		if f.on {
			given = append(given, f.name)
		}
	}
	if len(given) > 1 {
		return argsError(cmd, "%s are different output formats: give one of them", strings.Join(given, " and "))
	}
	return nil
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
	store, err := deps.OpenTasks()
	if err != nil {
		return err
	}
	list, warnings, err := store.List(ctx, filter)
	if err != nil {
		return err
	}
	printWarnings(deps.IO.ErrOut, warnings)
	if opts.JSON {
		return writeJSONList(deps.IO.Out, list, appendTaskJSON)
	}
	// Buffered: a system call per row would cost more than the rows.
	out := bufio.NewWriterSize(deps.IO.Out, 64<<10)
	if opts.Quiet {
		for _, t := range list {
			fmt.Fprintln(out, displayValue(t.ID))
		}
		return out.Flush()
	}
	if len(list) == 0 {
		fmt.Fprintln(deps.IO.Out, noTasksText(filter))
		return nil
	}
	width := terminalWidth(deps.IO.Out)
	writeTaskTable(out, list, tableStyle{wide: opts.Wide, width: width, color: width > 0 && !deps.Env.NoColor})
	return out.Flush()
}

// noTasksText says that ls found nothing, and with a filter what it
// looked for: "No background tasks." after `ls --status running` would
// read as if the finished tasks were gone too.
func noTasksText(filter tasks.Filter) string {
	what := "background tasks"
	if filter.Status != "" {
		what = string(filter.Status) + " tasks"
	}
	if filter.Scope != "" {
		what += " in scope " + displayValue(filter.Scope)
	}
	return "No " + what + "."
}
