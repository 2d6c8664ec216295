package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/config"
)

// NewCmdConfig builds `qtask config path|show|check`.
func NewCmdConfig(deps *Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Show where the config file is, what it sets, and whether it is valid",
	}
	cmd.AddCommand(
		&cobra.Command{
			Use:   "path",
			Short: "Print the config file's path ($QTASK_CONFIG, else $XDG_CONFIG_HOME/qtask/config.toml)",
			Args:  exactArgs(0),
			RunE: func(*cobra.Command, []string) error {
				_, err := fmt.Fprintln(deps.IO.Out, deps.Env.ConfigPath)
				return err
			},
		},
		&cobra.Command{
			Use:   "show",
			Short: "Print the effective configuration: the file's settings over the defaults",
			Args:  exactArgs(0),
			RunE: func(*cobra.Command, []string) error {
				cfg, err := deps.Config()
				if err != nil {
					return err
				}
				return cfg.Encode(deps.IO.Out)
			},
		},
		&cobra.Command{
			Use:   "check",
			Short: "Validate the config file; exit 1 naming the line and key if it is wrong",
			Args:  exactArgs(0),
			RunE: func(*cobra.Command, []string) error {
				_, exists, err := config.Load(deps.Env.ConfigPath)
				if err != nil {
					return err
				}
				if !exists {
					_, err = fmt.Fprintf(deps.IO.Out, "No config file at %s; using the defaults.\n", deps.Env.ConfigPath)
					return err
				}
				_, err = fmt.Fprintf(deps.IO.Out, "%s is valid.\n", deps.Env.ConfigPath)
				return err
			},
		},
	)
	asGroup(cmd)
	return cmd
}
