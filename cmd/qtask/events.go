package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks/monitor"
)

// EventsOptions are the parsed flags and argument of `qtask events`.
type EventsOptions struct {
	ID     string // "": every monitor
	Follow bool
}

// NewCmdEvents builds `qtask events`.
func NewCmdEvents(deps *Deps, runF func(context.Context, *EventsOptions) error) *cobra.Command {
	opts := &EventsOptions{}
	cmd := &cobra.Command{
		Use:   "events [ID]",
		Short: "Print the events monitors recorded, for people",
		Long: `Print the events of monitor ID, or of every monitor, oldest first, one a line:
when, which monitor, and the line. It only reads what the monitors kept
(capped as their output is): the notifications agents consume are left as
they are, so it can be run as often as you like. --follow keeps printing
new events as they come: for one monitor until it ends, for all of them
(new ones too) until Ctrl+C.`,
		Example: `  qtask events
  qtask events -f 8c1d3e07`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return argsError(cmd, "too many arguments: %s", strings.Join(args[1:], " "))
			}
			if len(args) == 1 {
				return idArg(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runEvents(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep printing new events (one monitor: until it ends)")
	return cmd
}

// eventTimeFormat is an event's time on its line: local, to the second.
const eventTimeFormat = "2006-01-02 15:04:05"

func runEvents(ctx context.Context, deps *Deps, opts *EventsOptions) error {
	store, err := deps.Store()
	if err != nil {
		return err
	}
	out := deps.IO.Out
	printed := false
	err = store.Events(ctx, opts.ID, opts.Follow, func(ev monitor.Event) error {
		printed = true
		line := ev.Line
		if ev.Note != "" {
			line = ev.Note
		}
		_, err := fmt.Fprintf(out, "%s  %s  %s\n", ev.Time.Local().Format(eventTimeFormat), displayValue(ev.Task), displayValue(line))
		return err
	})
	if errors.Is(err, context.Canceled) {
		return nil // Ctrl+C ends a follow; that is not an error
	}
	if err == nil && !printed && !opts.Follow {
		if opts.ID != "" {
			fmt.Fprintf(out, "No events from monitor %s.\n", displayValue(opts.ID))
		} else {
			fmt.Fprintln(out, "No monitor events.")
		}
	}
	return err
}
