package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/launch"
	"github.com/qtask/qtask/cmd/internal/wrapper"
	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/shellhooks"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/capture"
	"github.com/qtask/qtask/tmux"
)

// hiddenCommand builds one of the internal commands that tmux or a shell
// hook runs on qtask's behalf. They get the state directory as a flag: their
// environment is the tmux server's or the shell's, not the caller's.
func hiddenCommand(use string, nargs int, run func(cmd *cobra.Command, store *tasks.Store, args []string) error) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:    use,
		Hidden: true,
		Args:   exactArgs(nargs),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := tasks.OpenStore(stateDir)
			if err != nil {
				return err
			}
			return run(cmd, store, args)
		},
	}
	cmd.Flags().StringVar(&stateDir, tasks.StateDirFlag, "", "state directory")
	cmd.MarkFlagRequired(tasks.StateDirFlag)
	return cmd
}

// newCmdExec builds the hidden `qtask _exec ID`, which tmux runs as the
// first process of a task's pane.
func newCmdExec(deps *Deps) *cobra.Command {
	return hiddenCommand(tasks.ExecVerb+" ID", 1, func(cmd *cobra.Command, store *tasks.Store, args []string) error {
		tty, out, err := deps.IO.Files()
		if err != nil {
			return err
		}
		code, err := wrapper.Run(cmd.Context(), store, args[0], deps.Env, tty, out)
		if err == nil && code != 0 {
			err = &ExitError{Code: code}
		}
		return err
	})
}

// newCmdCapture builds the hidden `qtask _capture ID`, the reading end of
// the pane's pipe-pane.
func newCmdCapture(deps *Deps) *cobra.Command {
	return hiddenCommand(tasks.CaptureVerb+" ID", 1, func(_ *cobra.Command, store *tasks.Store, args []string) error {
		in, _, err := deps.IO.Files()
		if err != nil {
			return err
		}
		return store.Capture(args[0], in)
	})
}

// newCmdHandover builds the hidden `qtask _handover NAME`, which a pane
// pipe's shell becomes where the kernel will not let the wrapper take the
// pipe itself: it passes its stdin, the pipe, to the wrapper and exits. It
// needs no state directory.
func newCmdHandover(deps *Deps) *cobra.Command {
	return &cobra.Command{
		Use:    capture.HandoverVerb + " NAME",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			in, _, err := deps.IO.Files()
			if err != nil {
				return err
			}
			return capture.Handover(args[0], in)
		},
	}
}

// newCmdPaneDone builds the hidden `qtask _pane-done --status N`, run by the
// prompt hook of a shell whose command was promoted, once that command ends.
func newCmdPaneDone(deps *Deps) *cobra.Command {
	var status int
	cmd := hiddenCommand(tasks.PaneDoneVerb+" --status N", 0, func(cmd *cobra.Command, store *tasks.Store, _ []string) error {
		pane, err := tmux.ParsePaneID(deps.Env.TmuxPane)
		if err != nil {
			return err
		}
		cfg, err := deps.Config()
		if err != nil {
			cfg = config.Default() // the task must settle even with a broken config
		}
		_, tty, err := deps.IO.Files()
		if err != nil {
			return err
		}
		return shellhooks.Done(cmd.Context(), store, store.Dir(), pane, status, tty, cfg.KeepPromotedPane)
	})
	cmd.Flags().IntVar(&status, "status", 0, "exit status of the promoted command")
	return cmd
}

// panesClosedPatience is how long `qtask _panes-closed` gives the process
// of a closed pane to exit before it judges the task.
const panesClosedPatience = 5 * time.Second

// newCmdPanesClosed builds the hidden `qtask _panes-closed`, which the
// plugin's tmux hooks run when a window or pane goes away: it settles the
// running tasks whose pane is gone. Like the key bindings it runs with the
// tmux server's environment, which names the state directory and server.
func newCmdPanesClosed(deps *Deps) *cobra.Command {
	return &cobra.Command{
		Use:    "_panes-closed",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			store, err := deps.Store()
			if err != nil {
				return err
			}
			return store.SettleClosedPanes(cmd.Context(), launch.Server(deps.Env), panesClosedPatience)
		},
	}
}
