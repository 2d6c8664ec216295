package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// RunOptions are the parsed flags and arguments of `qtask run`.
type RunOptions struct {
	Command    string
	Background bool
	Name       string
	Cwd        string
	JSON       bool
}

// NewCmdRun builds `qtask run`. runF replaces the work in tests of flag parsing.
func NewCmdRun(deps *Deps, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] -- COMMAND...",
		Short: "Run a shell command as a task in its own tmux window",
		Long: `Run COMMAND as a task in its own tmux window. The words after -- are joined
by spaces into one shell command string and run by the configured shell with
-c, exactly as written: quotes, $VARS, $(...) and pipes all work.

With --bg the task starts in the background and qtask returns at once,
printing its id and output file.`,
		Example: `  qtask run --bg -- npm run dev
  qtask run --bg --name build -- 'make -j4 2>&1 | tee build.log'`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Command = strings.Join(args, " ")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), deps, opts)
		},
	}
	// Flags end at the first word of the command: `qtask run --bg ls -la`.
	cmd.Flags().SetInterspersed(false)
	cmd.Flags().BoolVar(&opts.Background, "bg", false, "start in the background and return at once")
	cmd.Flags().StringVar(&opts.Name, "name", "", "a label for the task")
	cmd.Flags().StringVar(&opts.Cwd, "cwd", "", "directory to run in (default: the current directory)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the task as a JSON object")
	return cmd
}

func runRun(ctx context.Context, deps *Deps, opts *RunOptions) error {
	if !opts.Background {
		return usageErrorf("foreground runs are not available yet: add --bg")
	}
	cwd, err := resolveCwd(opts.Cwd)
	if err != nil {
		return err
	}
	cfg, err := deps.Config()
	if err != nil {
		return err
	}
	store, err := deps.Store()
	if err != nil {
		return err
	}
	t, err := store.Start(ctx, tasks.StartOptions{
		Command:        opts.Command,
		Name:           opts.Name,
		Cwd:            cwd,
		Env:            deps.Environ,
		Scope:          deps.Env.Scope,
		Shell:          cfg.Shell,
		Background:     true,
		Session:        cfg.Session,
		Server:         deps.Server(),
		Self:           deps.Self,
		OutputMaxBytes: cfg.OutputMaxBytes,
		StopGrace:      cfg.StopGrace,
	})
	if err != nil {
		return err
	}
	out := deps.IO.Out
	if opts.JSON {
		return writeJSON(out, t)
	}
	fmt.Fprintf(out, "Started task %s: %s\n", t.ID, displayCommand(t.Label(), 72))
	fmt.Fprintf(out, "Output:  %s\n", t.OutputPath)
	fmt.Fprintf(out, "Follow:  qtask logs -f %s\n", t.ID)
	fmt.Fprintf(out, "Stop:    qtask stop %s\n", t.ID)
	return nil
}

// resolveCwd makes --cwd absolute against the current directory.
func resolveCwd(dir string) (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("current directory: %w", err)
	}
	if dir == "" {
		return wd, nil
	}
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir), nil
	}
	return filepath.Join(wd, dir), nil
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
