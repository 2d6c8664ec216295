package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/shellhooks"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

// newCmdExec builds the hidden `qtask _exec ID`, which tmux runs as the
// first process of a task's pane. The state directory comes as a flag
// because the pane's environment is the tmux server's, not the caller's.
func newCmdExec(deps *Deps) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:    "_exec ID",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := tasks.OpenStore(stateDir)
			if err != nil {
				return err
			}
			pane, err := tmux.ParsePaneID(deps.Env.TmuxPane)
			if err != nil {
				return err
			}
			code := store.Exec(cmd.Context(), tasks.ExecOptions{
				ID:      args[0],
				Self:    deps.Self,
				Server:  tmux.NewSocketServer(deps.Env.TmuxSocketFromTMUX()),
				TmuxEnv: deps.Env.Tmux,
				Pane:    pane,
				TTY:     os.Stdin,
				Out:     os.Stdout,
			})
			if code != 0 {
				return &ExitError{Code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "state directory")
	cmd.MarkFlagRequired("state-dir")
	return cmd
}

// newCmdCapture builds the hidden `qtask _capture ID`, the reading end of
// the pane's pipe-pane.
func newCmdCapture(deps *Deps) *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:    "_capture ID",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := tasks.OpenStore(stateDir)
			if err != nil {
				return err
			}
			return store.Capture(args[0], deps.IO.In)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "state directory")
	cmd.MarkFlagRequired("state-dir")
	return cmd
}

// newCmdPaneDone builds the hidden `qtask _pane-done --status N`, run by the
// prompt hook of a shell whose command was promoted, once that command ends.
func newCmdPaneDone(deps *Deps) *cobra.Command {
	var stateDir string
	var status int
	cmd := &cobra.Command{
		Use:    "_pane-done --status N",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			pane, err := tmux.ParsePaneID(deps.Env.TmuxPane)
			if err != nil {
				return err
			}
			cfg, err := deps.Config()
			if err != nil {
				cfg = config.Default() // the task must settle even with a broken config
			}
			store, err := tasks.OpenStore(stateDir)
			if err != nil {
				return err
			}
			return shellhooks.Done(cmd.Context(), store, stateDir, pane, status, os.Stdout, cfg.KeepPromotedPane)
		},
	}
	cmd.Flags().StringVar(&stateDir, "state-dir", "", "state directory")
	cmd.Flags().IntVar(&status, "status", 0, "exit status of the promoted command")
	cmd.MarkFlagRequired("state-dir")
	return cmd
}
