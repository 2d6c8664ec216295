package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// NewCmdMan builds `qtask man DIR`, which writes a man page per command
// (qtask.1, qtask-run.1, …) generated from the commands' own help, so the
// pages never drift from it.
func NewCmdMan(deps *Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "man DIR",
		Short: "Write man pages for every command into DIR",
		Long: `Write a man page for qtask and each of its commands into DIR (created if
missing), from the same text as --help. Install them with, e.g.,
qtask man ~/.local/share/man/man1.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			header := &doc.GenManHeader{Title: "QTASK", Section: "1", Source: "qtask " + version}
			if err := doc.GenManTree(cmd.Root(), header, dir); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			_, err := fmt.Fprintf(deps.IO.Out, "Wrote man pages to %s\n", dir)
			return err
		},
	}
}
