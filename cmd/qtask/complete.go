package main

import (
	"bytes"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/qtask/qtask/tasks"
)

// taskArgCompletion is what each command taking task ids offers when its
// argument is completed: every task, only running ones where a finished
// task would be refused (stop, wait, promote, attach), or only failed ones
// where nothing else would change (seen).
var taskArgCompletion = map[string]tasks.Status{
	"status":  "",
	"logs":    "",
	"stop":    tasks.StatusRunning,
	"wait":    tasks.StatusRunning,
	"promote": tasks.StatusRunning,
	"attach":  tasks.StatusRunning,
	"rm":      "",
	"seen":    tasks.StatusFailed,
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
			// KeepOrder: the shell shows them newest first, as listed,
			// not sorted by id.
			return completeTaskIDs(deps, cmd, status, args, prefix), cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
		}
	}
}

// completeTaskIDs lists the ids of tasks with status ("" for any) that
// start with prefix and are not already among args.
func completeTaskIDs(deps *Deps, cmd *cobra.Command, status tasks.Status, args []string, prefix string) []string {
	store, err := deps.Store()
	if err != nil {
		return nil
	}
	list, _, err := store.List(cmd.Context(), tasks.Filter{Status: status})
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

// bareBashCompletion makes `qtask completion bash` work in a bash without
// the bash-completion package (bash --norc, a fresh macOS, a minimal
// container). cobra's script (GenBashCompletionV2) splits the line with
// that package's _get_comp_words_by_ref even in its own fallback, so
// every Tab there printed "_get_comp_words_by_ref: command not found".
// Its fallback function is redefined after it, to split the line itself
// where the package is missing.
func bareBashCompletion(root *cobra.Command) {
	bash, _, err := root.Find([]string{"completion", "bash"})
	if err != nil || bash.Name() != "bash" {
		return
	}
	bash.Long = strings.Replace(bash.Long, "This script depends on the 'bash-completion' package.\n"+
		"If it is not installed already, you can install it via your OS's package manager.\n",
		"It works in any bash; the bash-completion package is used when loaded, not needed.\n", 1)
	bash.RunE = func(cmd *cobra.Command, _ []string) error {
		noDesc, _ := cmd.Flags().GetBool("no-descriptions")
		var b bytes.Buffer
		if err := root.GenBashCompletionV2(&b, !noDesc); err != nil {
			return err
		}
		b.WriteString(bashWordsFallback)
		_, err := cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
}

// bashWordsFallback replaces cobra's __qtask_init_completion, which
// __start_qtask calls when bash-completion's _init_completion is not
// loaded. With _get_comp_words_by_ref (an older bash-completion) it does
// what cobra's did; without, it splits the line up to the cursor at
// blanks only, as `_get_comp_words_by_ref -n =:` would (bash's own
// COMP_WORDS also breaks at = and :, which would cut `--status=running`).
const bashWordsFallback = `
# qtask: without the bash-completion package, split the line here.
__qtask_init_completion()
{
    COMPREPLY=()
    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
        return
    fi
    local line=${COMP_LINE:0:COMP_POINT}
    read -r -a words <<< "$line"
    if [[ ${#words[@]} -eq 0 || $line == *[[:blank:]] ]]; then
        words+=("")
    fi
    cword=$(( ${#words[@]} - 1 ))
    cur=${words[cword]}
    prev=${words[cword-1]}
}
`
