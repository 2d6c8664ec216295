package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// readyFlags are `run`'s readiness gate flags, as typed.
type readyFlags struct {
	pattern string
	port    int
	timeout time.Duration
	kill    bool
}

func (f *readyFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.pattern, "ready", "", "with --bg: return once a line of output matches this regular expression")
	cmd.Flags().IntVar(&f.port, "ready-port", 0, "with --bg: return once 127.0.0.1:PORT accepts a TCP connection")
	durationVar(cmd.Flags(), &f.timeout, "ready-timeout", tasks.DefaultReadyTimeout, "give up waiting for --ready/--ready-port after this long and exit 124 (0: no limit)")
	cmd.Flags().BoolVar(&f.kill, "ready-timeout-kill", false, "stop the task when --ready-timeout passes (default: it keeps running)")
}

// options checks the gate flags and returns the gate they ask for, nil
// for none.
func (f *readyFlags) options(cmd *cobra.Command, background bool) (*tasks.ReadyOptions, error) {
	set := cmd.Flags().Changed
	if !set("ready") && !set("ready-port") {
		for _, name := range []string{"ready-timeout", "ready-timeout-kill"} {
			if set(name) {
				return nil, argsError(cmd, "--%s needs a gate: add --ready REGEX or --ready-port PORT", name)
			}
		}
		return nil, nil
	}
	if set("ready") && set("ready-port") {
		return nil, argsError(cmd, "--ready and --ready-port are two gates: give one of them")
	}
	if !background {
		return nil, argsError(cmd, "a readiness gate (--ready, --ready-port) waits for a background task: add --bg")
	}
	if f.timeout < 0 {
		return nil, argsError(cmd, "--ready-timeout must not be negative")
	}
	opts := &tasks.ReadyOptions{Port: f.port, Timeout: f.timeout, KillOnTimeout: f.kill}
	if f.timeout == 0 {
		opts.Timeout = -1 // no limit
	}
	if set("ready") {
		re, err := compileGate(cmd, "--ready", f.pattern)
		if err != nil {
			return nil, err
		}
		opts.Pattern = re
	} else if err := tasks.CheckPort(f.port); err != nil {
		return nil, argsError(cmd, "--ready-port: %w", err)
	}
	return opts, nil
}

// compileGate compiles a gate's regular expression; a bad one is a usage
// error naming the flag.
func compileGate(cmd *cobra.Command, flag, pattern string) (*regexp.Regexp, error) {
	if pattern == "" {
		return nil, argsError(cmd, "%s needs a regular expression; an empty one would match any line", flag)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, argsError(cmd, "%s: not a regular expression (Go syntax): %v", flag, err)
	}
	return re, nil
}

// readyText says what made the task ready, and that it has ended since if
// it has.
func readyText(res *tasks.ReadyResult, gate tasks.ReadyOptions) string {
	what := fmt.Sprintf("127.0.0.1:%d accepts connections", gate.Port)
	if gate.Pattern != nil {
		what = "matched: " + displayCommand(res.Line, 200)
	}
	if !res.Task.Running() {
		what += fmt.Sprintf(" (it has ended since: %s)", displayCommand(res.Task.StatusText(), 200))
	}
	return what
}

// reportNotReady says on stderr why a gate was not met, with the last
// lines of output, and maps the outcome to its exit code: 4 for a task
// that ended first, 124 for a timeout.
func reportNotReady(deps *Deps, res *tasks.ReadyResult, gate tasks.ReadyOptions) error {
	t := res.Task
	id := displayValue(t.ID)
	waited := "waited for " + displayCommand(gate.Describe(), 200)
	status := displayCommand(t.StatusText(), 200)
	if res.Outcome == tasks.ReadyEnded {
		msg := fmt.Sprintf("task %s ended before it was ready (%s): %s", id, status, waited)
		printNotReady(deps, msg, res.Tail)
		return &ExitError{Code: exitNotReady}
	}
	msg := fmt.Sprintf("task %s not ready after %s (%s); ", id, gate.Timeout, waited)
	switch {
	case gate.KillOnTimeout:
		msg += fmt.Sprintf("stopped it (%s)", status)
	case t.Running():
		msg += fmt.Sprintf("it is still running: stop it with `%s stop %s`", deps.typedName(), id)
	default:
		msg += fmt.Sprintf("it has ended since (%s)", status)
	}
	printNotReady(deps, msg, res.Tail)
	return &ExitError{Code: exitTimeout}
}

// printNotReady prints msg and the last lines of output under it.
func printNotReady(deps *Deps, msg, tail string) {
	tail = strings.TrimRight(tail, "\n")
	if tail == "" {
		fmt.Fprintf(deps.IO.ErrOut, "qtask: %s; it printed nothing\n", msg)
	} else {
		fmt.Fprintf(deps.IO.ErrOut, "qtask: %s; last lines of output:\n", msg)
		for _, line := range strings.Split(tail, "\n") {
			fmt.Fprintf(deps.IO.ErrOut, "  %s\n", line)
		}
	}
}
