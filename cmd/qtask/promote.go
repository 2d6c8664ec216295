package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/shellhooks"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

// PromoteOptions are the parsed flags and argument of `qtask promote`.
type PromoteOptions struct {
	ID   string
	Pane string
	// Client, set by the plugin's key binding, is the tmux client to
	// report to with a one-line message instead of printing.
	Client string
}

// NewCmdPromote builds `qtask promote`.
func NewCmdPromote(deps *Deps, runF func(context.Context, *PromoteOptions) error) *cobra.Command {
	opts := &PromoteOptions{}
	cmd := &cobra.Command{
		Use:   "promote [ID | --pane PANE]",
		Short: "Send a running foreground task to the background without stopping it",
		Long: `Send a running foreground task to the background. The process keeps running
untouched; its window moves to the background session and the waiting
` + "`qtask run`" + ` returns at once. Without arguments, promote what runs in the
current pane ($TMUX_PANE). In a pane where ` + "`qtask run`" + ` waits on a task, the
task it waits on is promoted. The tmux plugin binds prefix B to

  qtask promote --tmux-client '#{client_name}' --pane '#{pane_id}'

which reports on the client's status line, prints nothing and exits 0.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 || len(args) == 1 && cmd.Flags().Changed("pane") {
				return usageErrorf("promote: give a task id or --pane, not both")
			}
			if len(args) == 1 {
				return idArg(cmd, args[0])
			}
			if cmd.Flags().Changed("pane") && opts.Pane == "" {
				// An unset variable, not "the current pane".
				return argsError(cmd, "--pane is empty: give a pane id such as %%3, or leave --pane out for the current pane")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			} else if opts.Pane == "" {
				opts.Pane = deps.Env.TmuxPane
				if opts.Pane == "" {
					return usageErrorf("promote: not inside tmux; give a task id or --pane")
				}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPromote(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Pane, "pane", "", "promote what runs in this tmux pane (e.g. %3)")
	cmd.Flags().StringVar(&opts.Client, "tmux-client", "", "report to this tmux client's status line, print nothing, exit 0 (for key bindings)")
	return cmd
}

func runPromote(ctx context.Context, deps *Deps, opts *PromoteOptions) error {
	res, err := promoteTask(ctx, deps, opts)
	if opts.Client != "" {
		return reportToClient(ctx, deps, opts.Client, promoteMessage(res, err))
	}
	if res == nil {
		return err
	}
	t := res.Task
	id, path := displayValue(t.ID), displayValue(t.OutputPath)
	switch {
	case res.AlreadyFinished:
		fmt.Fprintf(deps.IO.Out, "Task %s already finished, %s; nothing to promote.\n", id, displayCommand(finishedText(t, res.ExitCode), 200))
	case res.AlreadyBackground:
		fmt.Fprintf(deps.IO.Out, "Task %s is already in the background; output in %s\n", id, path)
	default:
		fmt.Fprintf(deps.IO.Out, "Promoted task %s to the background; output continues in %s\n", id, path)
	}
	return err
}

func promoteTask(ctx context.Context, deps *Deps, opts *PromoteOptions) (*tasks.PromoteResult, error) {
	cfg, err := deps.Config()
	if err != nil {
		return nil, err
	}
	if opts.ID != "" {
		store, err := deps.OpenTasks()
		if err != nil {
			return nil, err
		}
		return store.Promote(ctx, opts.ID, cfg.Session)
	}
	store, err := deps.Store()
	if err != nil {
		return nil, err
	}
	pane, err := tmux.ParsePaneID(opts.Pane)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return shellhooks.PromotePane(ctx, store, shellhooks.PromoteOptions{
		StateDir: deps.Env.StateDir, Server: launch.Server(deps.Env), Pane: pane, Scope: deps.Env.Scope,
		Session: cfg.Session, Self: deps.Self, OutputMaxBytes: cfg.OutputMaxBytes, KeepFullScreen: cfg.KeepFullScreen, StatusFormat: cfg.StatusFormat,
	})
}

// promoteMessage is the one short line the promote key shows:
// "qtask: 3f9a1c02 → background".
func promoteMessage(res *tasks.PromoteResult, err error) string {
	if res == nil {
		return "qtask: " + err.Error()
	}
	id := res.Task.ID
	switch {
	case err != nil:
		return fmt.Sprintf("qtask: %s: %v", id, err)
	case res.AlreadyFinished:
		return fmt.Sprintf("qtask: %s already finished, %s", id, finishedText(res.Task, res.ExitCode))
	case res.AlreadyBackground:
		return fmt.Sprintf("qtask: %s is already in the background", id)
	}
	return fmt.Sprintf("qtask: %s → background", id)
}

// finishedText is how a promote that lost the race reports the end:
// "exit 0", "exit 3", or the status when there is no exit code. code is
// the command's exit, known before the task settles.
func finishedText(t *tasks.Task, code *int) string {
	switch {
	case t.Status == tasks.StatusCancelled:
		return t.StatusText()
	case code != nil:
		return fmt.Sprintf("exit %d", *code)
	case t.Running():
		return "exit status not yet recorded"
	}
	return t.StatusText()
}
