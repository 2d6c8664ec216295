package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/monitor"
)

func testDeps() (*Deps, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	deps := &Deps{IO: IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}}
	deps.OpenTasks = deps.openStore
	return deps, out, errOut
}

// capturingCmd builds the named subcommand with a runF that records the
// parsed options (by value) in *got instead of doing any work.
func capturingCmd(t *testing.T, name string, deps *Deps, got *any) *cobra.Command {
	switch name {
	case "run":
		return NewCmdRun(deps, func(_ context.Context, o *RunOptions) error { *got = *o; return nil })
	case "logs":
		return NewCmdLogs(deps, func(_ context.Context, o *LogsOptions) error { *got = *o; return nil })
	case "stop":
		return NewCmdStop(deps, func(_ context.Context, o *StopOptions) error {
			c := *o
			if len(c.IDs) == 0 {
				c.IDs = nil
			}
			*got = c
			return nil
		})
	case "wait":
		return NewCmdWait(deps, func(_ context.Context, o *WaitOptions) error { *got = *o; return nil })
	case "ls":
		return NewCmdLs(deps, func(_ context.Context, o *LsOptions) error { *got = *o; return nil })
	case "status":
		return NewCmdStatus(deps, func(_ context.Context, o *StatusOptions) error { *got = *o; return nil })
	case "init":
		return NewCmdInit(deps, func(_ context.Context, o *InitOptions) error { *got = *o; return nil })
	case "monitor":
		return NewCmdMonitor(deps, func(_ context.Context, o *MonitorOptions) error { *got = *o; return nil })
	case "events":
		return NewCmdEvents(deps, func(_ context.Context, o *EventsOptions) error { *got = *o; return nil })
	case "prune":
		return NewCmdPrune(deps, func(_ context.Context, o *PruneOptions) error { *got = *o; return nil })
	}
	t.Fatalf("no capturing constructor for %q", name)
	return nil
}

// parseArgs runs `qtask args...` through the real root command, with the
// subcommand args[0] swapped for one that captures its options.
func parseArgs(t *testing.T, args ...string) (opts any, err error) {
	t.Helper()
	deps, out, errOut := testDeps()
	root := NewCmdRoot(deps)
	for _, c := range root.Commands() {
		if c.Name() == args[0] {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(capturingCmd(t, args[0], deps, &opts))
	root.SetArgs(args)
	_, err = root.ExecuteContextC(context.Background())
	if out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("qtask %s printed during parsing (the caller prints errors once):\nstdout: %s\nstderr: %s",
			strings.Join(args, " "), out, errOut)
	}
	return opts, err
}

func TestFlagParsing(t *testing.T) {
	cases := []struct {
		args []string
		want any // the options runF receives; nil means a usage error
	}{
		// run: flags end at the first word of the command.
		{[]string{"run", "--bg", "--name", "n", "--", "echo", "a", "b"}, RunOptions{Command: "echo a b", Background: true, Name: "n"}},
		{[]string{"run", "--bg", "ls", "-la"}, RunOptions{Command: "ls -la", Background: true}},
		{[]string{"run", "ls", "--bg"}, RunOptions{Command: "ls --bg"}},
		{[]string{"run", "--bg", "--", "make -j4 2>&1 | tee build.log"}, RunOptions{Command: "make -j4 2>&1 | tee build.log", Background: true}},
		{[]string{"run", "--bg", "--cwd", "sub", "--json", "--", "grep", "--", "-x"}, RunOptions{Command: "grep -- -x", Background: true, Cwd: "sub", JSON: true}},
		{[]string{"run", "--bg", "--name=my build", "make"}, RunOptions{Command: "make", Background: true, Name: "my build"}},
		{[]string{"run", "--bg"}, nil},
		{[]string{"run", "--bg", "--"}, nil},
		{[]string{"run", "--bogus", "--", "ls"}, nil},
		{[]string{"run", "--name"}, nil},
		{[]string{"run", "--json", "--", "true"}, nil},
		// --name given must name something; left out, the task is unnamed.
		{[]string{"run", "--bg", "--name", "   ", "--", "true"}, nil},
		{[]string{"run", "--bg", "--name", "", "--", "true"}, nil},
		{[]string{"run", "--name=", "--", "true"}, nil},
		{[]string{"run", "--bg", "--name", " build ", "--", "true"}, RunOptions{Command: "true", Background: true, Name: " build "}},
		{[]string{"monitor", "--name", "\t ", "--", "tail -F log"}, nil},
		{[]string{"monitor", "--name", "", "--", "tail -F log"}, nil},
		{[]string{"monitor", "--", " "}, nil},
		{[]string{"monitor", "--", "tail -F log"}, MonitorOptions{Command: "tail -F log", Monitor: monitor.Options{MaxEvents: monitor.DefaultMaxEvents, IdleTimeout: monitor.DefaultIdle}}},
		// run: readiness gates.
		{[]string{"run", "--bg", "--ready", "listening on", "--", "npm run dev"}, RunOptions{Command: "npm run dev", Background: true,
			Ready: &tasks.ReadyOptions{Pattern: regexp.MustCompile("listening on"), Timeout: tasks.DefaultReadyTimeout}}},
		{[]string{"run", "--bg", "--ready-port", "8000", "--ready-timeout", "0", "--ready-timeout-kill", "--", "srv"}, RunOptions{Command: "srv", Background: true,
			Ready: &tasks.ReadyOptions{Port: 8000, Timeout: -1, KillOnTimeout: true}}},
		{[]string{"run", "--ready", "x", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready", "x", "--ready-port", "8000", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready-timeout", "5s", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready-timeout-kill", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready", "(", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready", "", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready-port", "0", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready-port", "65536", "--", "srv"}, nil},
		{[]string{"run", "--bg", "--ready", "x", "--ready-timeout", "-1s", "--", "srv"}, nil},

		{[]string{"logs", "abc"}, LogsOptions{ID: "abc", Tail: -1}},
		{[]string{"logs", "-n", "3", "abc"}, LogsOptions{ID: "abc", Tail: 3}},
		{[]string{"logs", "--tail", "0", "abc"}, LogsOptions{ID: "abc", Tail: 0}},
		{[]string{"logs", "--offset", "10", "--limit", "5", "abc"}, LogsOptions{ID: "abc", Offset: 10, Limit: 5, Tail: -1}},
		{[]string{"logs", "-f", "--tail", "3", "abc"}, LogsOptions{ID: "abc", Tail: 3, Follow: true}},
		{[]string{"logs", "-f", "--offset", "100", "abc"}, LogsOptions{ID: "abc", Offset: 100, Tail: -1, Follow: true}},
		{[]string{"logs", "--tail", "3", "--offset", "2", "abc"}, nil},
		{[]string{"logs", "--tail", "0", "--limit", "5", "abc"}, nil},
		{[]string{"logs", "-f", "--limit", "5", "abc"}, nil},
		{[]string{"logs", "--offset", "-1", "abc"}, nil},
		{[]string{"logs", "--limit", "-1", "abc"}, nil},
		{[]string{"logs", "--tail", "many", "abc"}, nil},
		{[]string{"logs"}, nil},
		{[]string{"logs", "abc", "def"}, nil},
		{[]string{"logs", "--raw", "abc"}, LogsOptions{ID: "abc", Tail: -1, Raw: true}},
		{[]string{"logs", "--raw", "-f", "abc"}, nil},
		{[]string{"logs", "--raw", "--tail", "0", "abc"}, nil},
		{[]string{"logs", "--raw", "--offset", "3", "abc"}, nil},
		{[]string{"logs", "--raw", "--limit", "3", "abc"}, nil},

		{[]string{"events"}, EventsOptions{}},
		{[]string{"events", "-f"}, EventsOptions{Follow: true}},
		{[]string{"events", "--follow", "abc"}, EventsOptions{ID: "abc", Follow: true}},
		{[]string{"events", "abc", "def"}, nil},
		{[]string{"events", ""}, nil},

		{[]string{"stop", "abc", "def"}, StopOptions{IDs: []string{"abc", "def"}}},
		{[]string{"stop", "--all"}, StopOptions{All: true}},
		{[]string{"stop", "--grace", "5s", "abc"}, StopOptions{IDs: []string{"abc"}, Grace: durationPtr(5 * time.Second)}},
		{[]string{"stop", "--grace", "0s", "--all"}, StopOptions{All: true, Grace: durationPtr(0)}},
		{[]string{"stop"}, nil},
		{[]string{"stop", "--all", "abc"}, nil},
		{[]string{"stop", "--grace", "-1s", "abc"}, nil},
		{[]string{"stop", "--grace", "soon", "abc"}, nil},

		{[]string{"wait", "abc"}, WaitOptions{IDs: []string{"abc"}}},
		{[]string{"wait", "abc", "def"}, WaitOptions{IDs: []string{"abc", "def"}}},
		{[]string{"wait", "--timeout", "30s", "abc"}, WaitOptions{IDs: []string{"abc"}, Timeout: durationPtr(30 * time.Second)}},
		{[]string{"wait", "--timeout", "0", "abc"}, WaitOptions{IDs: []string{"abc"}, Timeout: durationPtr(0)}},
		// Every duration takes days, as prune --older-than 7d always did.
		{[]string{"wait", "--timeout", "1d", "abc"}, WaitOptions{IDs: []string{"abc"}, Timeout: durationPtr(24 * time.Hour)}},
		{[]string{"wait", "--timeout", "1.5d", "abc"}, nil},
		{[]string{"run", "--timeout", "2d", "--", "make"}, RunOptions{Command: "make", Timeout: durationPtr(48 * time.Hour)}},
		{[]string{"run", "--timeout", "0", "--", "make"}, RunOptions{Command: "make", Timeout: durationPtr(0)}},
		{[]string{"run", "--bg", "--ready", "up", "--ready-timeout", "1d", "--", "srv"}, RunOptions{Command: "srv", Background: true,
			Ready: &tasks.ReadyOptions{Pattern: regexp.MustCompile("up"), Timeout: 24 * time.Hour}}},
		{[]string{"stop", "--grace", "1d", "abc"}, StopOptions{IDs: []string{"abc"}, Grace: durationPtr(24 * time.Hour)}},
		{[]string{"wait"}, nil},
		{[]string{"wait", "--timeout", "30s"}, nil},
		{[]string{"wait", "--timeout", "-1s", "abc"}, nil},
		{[]string{"wait", "abc", "--until", "ready"}, WaitOptions{IDs: []string{"abc"}, Until: regexp.MustCompile("ready")}},
		{[]string{"wait", "abc", "def", "--until", "ready"}, nil},
		{[]string{"wait", "abc", "--until", "("}, nil},
		{[]string{"wait", "abc", "--until", ""}, nil},

		{[]string{"ls", "--json", "--status", "failed"}, LsOptions{JSON: true, Status: "failed"}},
		{[]string{"ls", "extra"}, nil},
		// One output format at a time: the others would be ignored.
		{[]string{"ls", "-q", "--status", "running"}, LsOptions{Quiet: true, Status: "running"}},
		{[]string{"ls", "-o", "wide"}, LsOptions{Wide: true}},
		{[]string{"ls", "--json", "-q"}, nil},
		{[]string{"ls", "--json", "--wide"}, nil},
		{[]string{"ls", "-q", "-o", "wide"}, nil},
		{[]string{"status", "--json", "abc"}, StatusOptions{ID: "abc", JSON: true}},
		{[]string{"status"}, nil},

		{[]string{"init", "zsh"}, InitOptions{Target: "zsh"}},
		{[]string{"init", "tmux"}, InitOptions{Target: "tmux"}},
		{[]string{"init"}, nil},
		{[]string{"init", "bash", "zsh"}, nil},

		{[]string{"prune"}, PruneOptions{}},
		{[]string{"prune", "--dry-run", "--json"}, PruneOptions{DryRun: true, JSON: true}},
		{[]string{"prune", "--all-finished"}, PruneOptions{AllFinished: true}},
		{[]string{"prune", "--older-than", "7d"}, PruneOptions{OlderThan: 7 * 24 * time.Hour}},
		{[]string{"prune", "--older-than", "90m"}, PruneOptions{OlderThan: 90 * time.Minute}},
		{[]string{"prune", "--older-than", "0s"}, nil},
		{[]string{"prune", "--older-than", "-1h"}, nil},
		{[]string{"prune", "--older-than", "-1d"}, nil},
		{[]string{"prune", "--older-than", "week"}, nil},
		{[]string{"prune", "--older-than", "1.5d"}, nil},
		{[]string{"prune", "--older-than", "1d", "--all-finished"}, nil},
		{[]string{"prune", "abc"}, nil},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			got, err := parseArgs(t, c.args...)
			if c.want == nil {
				var usage *UsageError
				if !errors.As(err, &usage) {
					t.Errorf("qtask %s: error %v (%T), want a usage error (exit 2)", strings.Join(c.args, " "), err, err)
				}
				if got != nil {
					t.Errorf("qtask %s went ahead with %+v despite the usage error", strings.Join(c.args, " "), got)
				}
				return
			}
			if err != nil {
				t.Fatalf("qtask %s: %v", strings.Join(c.args, " "), err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("qtask %s parsed as %+v, want %+v", strings.Join(c.args, " "), got, c.want)
			}
		})
	}
}

func TestRootUnknownFlagIsUsageError(t *testing.T) {
	deps, _, _ := testDeps()
	root := NewCmdRoot(deps)
	root.SetArgs([]string{"--bogus"})
	_, err := root.ExecuteC()
	var usage *UsageError
	if !errors.As(err, &usage) {
		t.Errorf("qtask --bogus: error %v (%T), want a usage error (exit 2)", err, err)
	}
}

func TestRootUnknownCommandIsUsageError(t *testing.T) {
	for _, args := range [][]string{{"frobnicate"}, {"stpo", "abc"}} {
		deps, _, _ := testDeps()
		root := NewCmdRoot(deps)
		root.SetArgs(args)
		_, err := root.ExecuteC()
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("qtask %s: error %v, want a usage error (exit 2) naming %q: a typo must not pass for success",
				strings.Join(args, " "), err, args[0])
		}
	}
}

func TestExitCode(t *testing.T) {
	usage := &UsageError{Err: errors.New("stop: give task ids or --all, not both or neither")}
	cases := []struct {
		name   string
		ran    string // the command that failed
		err    error
		code   int
		stderr string
	}{
		{"success", "qtask stop", nil, 0, ""},
		{"usage error", "qtask stop", usage, 2,
			"qtask: stop: give task ids or --all, not both or neither (see 'qtask stop --help')\n"},
		{"wrapped usage error", "qtask stop", fmt.Errorf("--status: %w", usage), 2,
			"qtask: --status: stop: give task ids or --all, not both or neither (see 'qtask stop --help')\n"},
		{"usage error with its command", "qtask stop", &UsageError{Err: errors.New("missing task ID"), Help: "qtask status"}, 2,
			"qtask: missing task ID (see 'qtask status --help')\n"},
		{"exit error is silent", "qtask stop", &ExitError{Code: 7}, 7, ""},
		{"timeout", "qtask stop", &ExitError{Code: exitTimeout}, 124, ""},
		{"wrapped exit error", "qtask stop", fmt.Errorf("wait: %w", &ExitError{Code: 3}), 3, ""},
		{"other error", "qtask stop", errors.New(`no task with id "zz"`), 1, "qtask: no task with id \"zz\"\n"},
		{"usage error of the root", "qtask", &UsageError{Err: errors.New(`unknown command "x"`)}, 2,
			"qtask: unknown command \"x\" (see 'qtask --help')\n"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		if got := exitCode(c.err, c.ran, &stderr); got != c.code || stderr.String() != c.stderr {
			t.Errorf("%s: qtask exits %d printing %q, want %d printing %q", c.name, got, stderr.String(), c.code, c.stderr)
		}
	}
}

func durationPtr(d time.Duration) *time.Duration { return &d }

// TestSubcommandWords holds the table rootFor finds a call's command in to
// the commands themselves: a word missing from it would build the whole
// tree (slower, still right), a wrong one would build the wrong command.
func TestSubcommandWords(t *testing.T) {
	deps, _, _ := testDeps()
	seen := map[string]bool{}
	for _, sub := range subcommands {
		cmd := sub.build(deps)
		want := append([]string{cmd.Name()}, cmd.Aliases...)
		if !slices.Equal(sub.words, want) {
			t.Errorf("subcommands lists %q for the command that answers to %q", sub.words, want)
		}
		seen[cmd.Name()] = true
	}
	for _, cmd := range NewCmdRoot(deps).Commands() {
		if !seen[cmd.Name()] && cmd.Name() != "help" && cmd.Name() != "completion" {
			t.Errorf("qtask %s is not in subcommands", cmd.Name())
		}
	}
}

// TestRootForBuildsWhatRuns: a call naming a command gets that command,
// with the root's flags and help; anything else the whole tree.
func TestRootForBuildsWhatRuns(t *testing.T) {
	deps, _, _ := testDeps()
	names := func(root *cobra.Command) []string {
		var out []string
		for _, c := range root.Commands() {
			out = append(out, c.Name())
		}
		return out
	}
	all := names(NewCmdRoot(deps))
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"run", "--bg", "--", "true"}, []string{"run"}},
		{[]string{"list", "--json"}, []string{"ls"}},
		{[]string{"fg", "abc"}, []string{"attach"}},
		{[]string{"_exec", "abc"}, []string{"_exec"}},
		{[]string{"man", "/tmp/man"}, all},
		{nil, all},
		{[]string{"--version"}, all},
		{[]string{"help", "run"}, all},
		{[]string{"completion", "bash"}, all},
		{[]string{"__complete", "stop", ""}, all},
		{[]string{"stpo"}, all},
	} {
		got := names(rootFor(deps, tc.args))
		if !slices.Equal(got, tc.want) {
			t.Errorf("rootFor(%q) built %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestVersionFlagPrintsVersionText: --version is worked out when asked
// for, and says what `qtask version` says.
func TestVersionFlagPrintsVersionText(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		deps, out, _ := testDeps()
		root := rootFor(deps, args)
		root.SetArgs(args)
		if _, err := root.ExecuteC(); err != nil {
			t.Fatalf("qtask %s: %v", args[0], err)
		}
		if got, want := out.String(), versionText()+"\n"; got != want {
			t.Errorf("qtask %s printed %q, want %q", args[0], got, want)
		}
	}
}

// TestBadDurationSaysTheSyntax: a duration flag that does not parse says,
// in qtask's words, what it takes, days included, whichever flag it is.
func TestBadDurationSaysTheSyntax(t *testing.T) {
	for _, args := range [][]string{
		{"wait", "--timeout", "soon", "abc"},
		{"prune", "--older-than", "soon"},
		{"stop", "--grace", "soon", "abc"},
	} {
		_, err := parseArgs(t, args...)
		want := `invalid value "soon" for ` + args[1] + `: want a duration such as 30s, 5m, 1h30m or 7d`
		var usage *UsageError
		if !errors.As(err, &usage) || err.Error() != want {
			t.Errorf("qtask %s: %v, want the usage error %q", strings.Join(args, " "), err, want)
		}
	}
}

// TestEmptyIDIsAUsageError: `qtask status ""` (an unset variable in a
// script) once said `no task with id ""`, exit 1, as if a task were
// missing; promote "" and promote --pane "" went on to the current pane.
// Every command that takes a task ID (or a pane) refuses an empty one
// before doing anything: exit 2, saying so.
func TestEmptyIDIsAUsageError(t *testing.T) {
	for _, args := range [][]string{
		{"status", ""}, {"logs", ""}, {"attach", ""}, {"fg", ""}, {"restart", ""},
		{"stop", ""}, {"stop", "abc", ""}, {"wait", ""}, {"wait", "abc", ""},
		{"rm", "abc", ""}, {"rm", "--force", ""}, {"promote", ""}, {"promote", "--pane", ""}, {"monitor", "", "--match", "x"},
	} {
		deps, out, _ := testDeps()
		deps.Env.TmuxPane = "%1" // promote '' must not fall back to the current pane
		root := rootFor(deps, args)
		root.SetArgs(args)
		_, err := root.ExecuteC()
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), "task id is empty") && !strings.Contains(err.Error(), "--pane is empty") {
			t.Errorf("qtask %q: %v, want a usage error saying the task id is empty", args, err)
		}
		if out.Len() != 0 {
			t.Errorf("qtask %q printed %q", args, out)
		}
	}
}
