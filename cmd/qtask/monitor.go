package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/monitor"
)

// MonitorOptions are the parsed flags and arguments of `qtask monitor`:
// a command to run as a monitor, or the task whose output to watch.
type MonitorOptions struct {
	Command string
	Source  string
	Name    string
	JSON    bool
	// Agent words the result for a coding agent (--agent or $QTASK_AGENT).
	Agent   bool
	Monitor monitor.Options
}

// NewCmdMonitor builds `qtask monitor`. runF replaces the work in tests of
// flag parsing.
func NewCmdMonitor(deps *Deps, runF func(context.Context, *MonitorOptions) error) *cobra.Command {
	opts := &MonitorOptions{}
	cmd := &cobra.Command{
		Use:   "monitor [flags] -- COMMAND... | monitor ID --match REGEX",
		Short: "Run a command, or watch a task, and turn its output lines into notifications",
		Long: fmt.Sprintf(`Run COMMAND as a monitor: a task in its own tmux window, like any other,
whose output lines each become an event notification for your scope (read
them with `+"`qtask agent inbox`"+`, or an agent's hooks and MCP server deliver them).
With --match only the lines matching REGEX (RE2 syntax) are events. When it
ends, one more notification gives the total events and how many lines the
throttle dropped.

With a task ID instead of a command, watch that task's output from now on,
without touching the task: the monitor's window follows its output, and it
ends when the task does.

Events are throttled: %d at once, then one a second, and at most %d wait
unread; lines beyond that are dropped and counted, blank lines are never
events. A line is cut at %d characters. The monitor ends, completed, after --max-events events (default
%d, at most %d) or when no output came for --idle-timeout (default %s, at
most %s), and then stops its command, never a task it watches: start a
server as a task and monitor its ID. To be told once it is ready, start it
with qtask run --bg --ready REGEX instead: a monitor of a task sees only
the lines printed after the monitor starts. At most %d monitors run at once in one scope; more
are refused (exit 3) until one ends.`,
			monitor.Burst, monitor.MaxUnread, monitor.LineMax, monitor.DefaultMaxEvents, monitor.MaxEventsCap,
			monitor.DefaultIdle, monitor.IdleCap, monitor.MaxRunning),
		Example: `  qtask monitor --match 'ERROR|FAIL' -- tail -F build.log
  qtask monitor 3f9a1c02 --match 'panic|ERROR'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := parseMonitorArgs(cmd, args, opts); err != nil {
				return err
			}
			resolved, err := opts.Monitor.Resolve()
			if err != nil {
				return &UsageError{Err: err, Help: cmd.CommandPath()}
			}
			opts.Monitor = resolved
			opts.Agent = opts.Agent || deps.Env.Agent
			if err := checkNameFlag(cmd, opts.Name); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMonitor(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Monitor.Match, "match", "", "only lines matching this regular expression (RE2) are events")
	cmd.Flags().IntVar(&opts.Monitor.MaxEvents, "max-events", monitor.DefaultMaxEvents, fmt.Sprintf("end (completed) after this many events; at most %d", monitor.MaxEventsCap))
	durationVar(cmd.Flags(), &opts.Monitor.IdleTimeout, "idle-timeout", monitor.DefaultIdle, fmt.Sprintf("end (completed) when no output came for this long; at most %s", monitor.IdleCap))
	cmd.Flags().StringVar(&opts.Name, "name", "", "a label for the monitor")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the monitor task as a JSON object")
	cmd.Flags().BoolVar(&opts.Agent, "agent", false, "agent mode: the result worded for a coding agent (default: on when $QTASK_AGENT is set)")
	return cmd
}

// monitorExample is how a monitor's command is given, for the messages
// that say it is missing.
const monitorExample = "qtask monitor -- make test"

// parseMonitorArgs tells a command (the words after --) from a task ID
// (one word, no --).
func parseMonitorArgs(cmd *cobra.Command, args []string, opts *MonitorOptions) error {
	dash := cmd.ArgsLenAtDash()
	switch {
	case dash == 0 && len(args) > 0:
		opts.Command = strings.Join(args, " ")
		if err := tasks.CheckCommand(opts.Command, monitorExample); err != nil {
			return &UsageError{Err: err, Help: cmd.CommandPath()}
		}
		return nil
	case dash > 0:
		return argsError(cmd, "give either a task ID or -- COMMAND, not both: %s", strings.Join(args[:dash], " "))
	case len(args) == 1:
		opts.Source = args[0]
		return idArg(cmd, opts.Source)
	case len(args) == 0:
		return argsError(cmd, "missing command: put it after --, e.g. %s", monitorExample)
	}
	return argsError(cmd, "too many arguments: put the command after --, e.g. qtask monitor -- %s", strings.Join(args, " "))
}

func runMonitor(ctx context.Context, deps *Deps, opts *MonitorOptions) error {
	cwd, err := resolveCwd("")
	if err != nil {
		return err
	}
	cfg, store, err := deps.ConfigAndStore()
	if err != nil {
		return err
	}
	start := deps.startOptions(cfg, store)
	start.Command, start.Name, start.Cwd = opts.Command, opts.Name, cwd
	start.Monitor = &tasks.MonitorOptions{Options: opts.Monitor, Source: opts.Source}
	t, err := store.Start(ctx, start)
	if err != nil {
		return err
	}
	out := deps.IO.Out
	if opts.JSON {
		return writeJSON(out, t)
	}
	id := displayValue(t.ID)
	if opts.Agent {
		terms := agent.MonitorTerms{Match: displayValue(opts.Monitor.Match), MaxEvents: opts.Monitor.MaxEvents, IdleTimeout: opts.Monitor.IdleTimeout}
		if opts.Source != "" {
			// The full id, as the monitor's own command names it.
			source, err := store.Resolve(ctx, opts.Source)
			if err != nil {
				source = opts.Source
			}
			terms.Source = displayValue(source)
		}
		_, err := fmt.Fprint(out, agent.MonitorStarted(deps.agentName(), id, displayCommand(t.Label(), 200), terms))
		return err
	}
	fmt.Fprintf(out, "Started monitor %s: %s\n", id, displayCommand(t.Label(), 72))
	fmt.Fprintf(out, "Events:  %s agent inbox --wait 10m (scope %s)\n", deps.typedName(), displayValue(t.Scope))
	fmt.Fprintf(out, "Stop:    %s stop %s\n", deps.typedName(), id)
	return nil
}
