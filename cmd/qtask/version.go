package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// version is set at release time with -ldflags "-X main.version=v1.2.3".
var version = "dev"

// NewCmdVersion builds `qtask version`.
func NewCmdVersion(deps *Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print qtask's version",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintf(deps.IO.Out, "qtask %s (%s, %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}
