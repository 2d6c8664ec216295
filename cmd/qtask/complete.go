package main

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// taskArgCompletion is what each command taking task ids offers when its
// argument is completed: every task, or only running ones where a finished
// task would be refused (stop, wait, promote, attach).
var taskArgCompletion = map[string]tasks.Status{
	"status":  "",
	"logs":    "",
	"stop":    tasks.StatusRunning,
	"wait":    tasks.StatusRunning,
	"promote": tasks.StatusRunning,
	"attach":  tasks.StatusRunning,
	"rm":      "",
	"restart": "",
}

// addTaskCompletion gives the commands that take task ids a completion of
// them (with the task's name or command as the description), newest
// first, for cobra's generated shell completion scripts.
func addTaskCompletion(deps *Deps, root *cobra.Command) {
	for _, cmd := range root.Commands() {
		status, ok := taskArgCompletion[cmd.Name()]
		if !ok {
			continue
		}
		single := strings.Count(cmd.Use, "...") == 0
		cmd.ValidArgsFunction = func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
			if single && len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeTaskIDs(deps, cmd, status, args, prefix), cobra.ShellCompDirectiveNoFileComp
		}
	}
}

// completeTaskIDs lists the ids of tasks with status ("" for any) that
// start with prefix and are not already among args.
func completeTaskIDs(deps *Deps, cmd *cobra.Command, status tasks.Status, args []string, prefix string) []string {
	store, err := deps.Store(cmd.Context())
	if err != nil {
		return nil
	}
	list, _, err := store.List(tasks.Filter{Status: status})
	if err != nil {
		return nil
	}
	var out []string
	for i := len(list) - 1; i >= 0; i-- {
		t := list[i]
		if strings.HasPrefix(t.ID, prefix) && !slices.Contains(args, t.ID) {
			out = append(out, t.ID+"\t"+displayCommand(t.Label(), 60))
		}
	}
	return out
}
