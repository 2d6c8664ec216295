package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/output"
)

// statusTailBytes is how much recent output `status` shows for a running task.
const statusTailBytes = 2000

// statusEndLines is how many last lines of output `status` shows for an
// ended task.
const statusEndLines = 10

// StatusOptions are the parsed flags and argument of `qtask status`.
type StatusOptions struct {
	ID   string
	JSON bool
}

// NewCmdStatus builds `qtask status`.
func NewCmdStatus(deps *Deps, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{}
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show one task in full, with recent output while it runs",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runStatus(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the task as a JSON object")
	return cmd
}

func runStatus(ctx context.Context, deps *Deps, opts *StatusOptions) error {
	store, err := deps.OpenTasks()
	if err != nil {
		return err
	}
	t, err := viewTask(ctx, store, opts.ID)
	if err != nil {
		return err
	}
	out := deps.IO.Out
	if opts.JSON {
		return writeJSON(out, t)
	}
	writeStatusRows(out, t)
	if !t.Running() {
		return writeEndLines(out, t)
	}
	return writeOutputSoFar(out, t)
}

// writeStatusRows writes the task's fields, one "name: value" row each;
// a field that does not apply (no name, no pid yet, an ended task's pane)
// has no row.
func writeStatusRows(out io.Writer, t *tasks.Task) {
	row := func(k, v string) { fmt.Fprintf(out, "%-9s %s\n", k+":", v) }
	row("id", displayValue(t.ID))
	if t.Name != "" {
		row("name", displayCommand(t.Name, 200))
	}
	row("status", displayCommand(t.StatusText(), 200))
	row("command", displayCommand(t.Command, 500))
	row("cwd", displayCommand(t.Cwd, 500))
	row("scope", displayCommand(t.Scope, 200))
	if t.PID != 0 {
		row("pid", fmt.Sprint(t.PID))
	}
	if t.PaneID != "" && t.Running() {
		row("pane", displayValue(t.PaneID)) // an ended task's pane is gone or reused
	}
	row("started", t.StartedAt.Local().Format(time.RFC3339))
	if t.EndedAt != nil {
		row("ended", t.EndedAt.Local().Format(time.RFC3339))
	}
	row("runtime", formatRuntime(t.Runtime(time.Now())))
	row("output", displayValue(t.OutputPath))
	if !t.OutputComplete && t.OutputLoss != "" {
		row("lost", displayCommand(t.OutputLoss, 500))
	}
}

// writeEndLines writes an ended task's last lines of output: why it failed
// is usually there. Nothing for a task that printed nothing.
func writeEndLines(out io.Writer, t *tasks.Task) error {
	var tail strings.Builder
	if _, err := (output.File{Task: t.ID, Path: t.OutputPath}).WriteTail(&tail, statusEndLines); err != nil {
		return err
	}
	if tail.Len() == 0 {
		return nil
	}
	fmt.Fprintf(out, "\n--- last %d lines of output ---\n%s", statusEndLines, tail.String())
	if !strings.HasSuffix(tail.String(), "\n") {
		fmt.Fprintln(out)
	}
	return nil
}

// writeOutputSoFar writes the end of a running task's output, a bounded
// number of characters, and says whether that is all of it.
func writeOutputSoFar(out io.Writer, t *tasks.Task) error {
	tail, cut, err := (output.File{Task: t.ID, Path: t.OutputPath}).Tail(statusTailBytes)
	if err != nil {
		return err
	}
	if cut {
		fmt.Fprintf(out, "\n--- last %d characters of output ---\n", statusTailBytes)
	} else {
		fmt.Fprintln(out, "\n--- output so far ---")
	}
	fmt.Fprint(out, tail)
	if tail != "" && tail[len(tail)-1] != '\n' {
		fmt.Fprintln(out)
	}
	return nil
}
