package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/cmd/internal/doctor"
	"github.com/qtask/qtask/cmd/internal/launch"
)

// DoctorOptions are the parsed flags of `qtask doctor`.
type DoctorOptions struct {
	JSON bool
}

// NewCmdDoctor builds `qtask doctor`.
func NewCmdDoctor(deps *Deps, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{}
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check tmux, the plugin, the state directory, the config and the locale",
		Long: `Check what qtask needs and say how to fix each problem: tmux's version, the
tmux server qtask uses (reachable; the plugin's key bindings; the shell panes
with qtask's hooks, the one doctor runs in counted as its shell; not inside a
service's cgroup, which would kill it and every task on restart), the state
directory's owner and modes, running tasks on other tmux servers, the config
file, and a UTF-8 locale. Exit 0 when everything is healthy, 1 otherwise.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDoctor(cmd.Context(), deps, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the findings as a JSON array of {check, ok, detail, fix}")
	return cmd
}

func runDoctor(ctx context.Context, deps *Deps, opts *DoctorOptions) error {
	findings := doctor.Run(ctx, doctor.Inputs{Server: launch.Server(deps.Env), Env: deps.Env})
	if opts.JSON {
		if err := writeJSON(deps.IO.Out, findings); err != nil {
			return err
		}
	} else {
		for _, f := range findings {
			mark := "ok  "
			if !f.OK {
				mark = "FAIL"
			}
			fmt.Fprintf(deps.IO.Out, "%s  %s: %s\n", mark, f.Check, displayCommand(f.Detail, 300))
			if f.Fix != "" {
				fmt.Fprintf(deps.IO.Out, "      fix: %s\n", f.Fix)
			}
		}
	}
	if !doctor.Healthy(findings) {
		return &ExitError{Code: exitError}
	}
	return nil
}
