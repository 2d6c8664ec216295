package main

import (
	"github.com/spf13/cobra"

	"strings"
	"testing"
)

// TestEveryCommandRefusesBadInputInOneLine: for every command qtask has, an
// unknown flag and each mistake listed for it exit 2 with exactly one line
// on stderr, naming what was wrong and ending with the --help to read,
// without a doubled prefix or the parsing library's wording, and print
// nothing on stdout. A command missing from the table fails the test, so a
// new command gets its cases.
func TestEveryCommandRefusesBadInputInOneLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Per command (its path without "qtask"): the mistakes besides an
	// unknown flag, and the --help each should point to ("" the command's).
	type mistake struct {
		args []string
		help string
	}
	m := func(args ...string) mistake { return mistake{args: args} }
	table := map[string][]mistake{
		"":                      {m("frobnicate"), m("stpo", "abc")},
		"run":                   {m(), m("--timeout", "zz", "--", "true"), m("--on-timeout", "zz", "--", "true")},
		"monitor":               {m(), m("--idle-timeout", "zz", "--", "true")},
		"ls":                    {m("x"), m("-o", "nope")},
		"status":                {m(), m("a", "b")},
		"logs":                  {m(), m("--tail", "x", "1"), m("--tail", "-5", "1"), m("--offset", "x", "1")},
		"events":                {m("a", "b"), m("--follow=zz")},
		"stop":                  {m(), m("--grace", "zz", "1")},
		"wait":                  {m(), m("--timeout", "zz", "1")},
		"promote":               {m("a", "b")},
		"attach":                {m(), m("a", "b")},
		"prune":                 {m("x")},
		"status-line":           {m("x")},
		"doctor":                {m("x")},
		"rm":                    {m()},
		"seen":                  {m(), m("--all", "abc")},
		"restart":               {m(), m("a", "b")},
		"man":                   {m(), m("a", "b"), m("")},
		"ui":                    {m("x")},
		"agent":                 {m(), m("nosub")},
		"agent inbox":           {m("x")},
		"agent hook":            nil, // exits 1 on a bad flag: Claude reads 2 as "block" (see below)
		"agent install":         {m(), m("nope")},
		"agent uninstall":       {m(), m("nope")},
		"agent shell":           {m()},
		"mcp":                   {m("x")},
		"config":                {m(), m("nosub")},
		"config path":           {m("x")},
		"config show":           {m("x")},
		"config check":          {m("x")},
		"version":               {m("x")},
		"init":                  {m(), m("nosh")},
		"completion":            {m(), m("nosh")},
		"completion bash":       {m("x")},
		"completion zsh":        {m("x")},
		"completion fish":       {m("x")},
		"completion powershell": {m("x")},
		"help":                  {{args: []string{"nosuch"}, help: "qtask"}},
	}
	deps, _, _ := testDeps()
	root := NewCmdRoot(deps)
	root.InitDefaultHelpCmd()
	var walk func(prefix string, cmds []*cobra.Command)
	seen := map[string]bool{}
	walk = func(prefix string, cmds []*cobra.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue // qtask's own internals, run by qtask itself
			}
			path := strings.TrimSpace(prefix + " " + c.Name())
			seen[path] = true
			if _, ok := table[path]; !ok {
				t.Errorf("qtask %s is not in the table: add its usage mistakes", path)
			}
			walk(path, c.Commands())
		}
	}
	seen[""] = true
	walk("", root.Commands())
	for path, mistakes := range table {
		if !seen[path] {
			t.Errorf("the table lists qtask %s, which is not a command", path)
			continue
		}
		if path == "agent hook" {
			continue
		}
		words := strings.Fields(path)
		all := append([]mistake{m("--no-such-flag")}, mistakes...)
		for _, mis := range all {
			args := append(append([]string{}, words...), mis.args...)
			if path == "" && mis.args[0] == "--no-such-flag" {
				args = []string{"--no-such-flag"}
			}
			help := mis.help
			if help == "" {
				help = strings.TrimSpace("qtask " + path)
			}
			r := h.qtask(args...)
			line := strings.TrimSuffix(r.stderr, "\n")
			switch {
			case r.code != exitUsage:
				t.Errorf("qtask %s: exit %d, want %d; stderr %q", strings.Join(args, " "), r.code, exitUsage, r.stderr)
			case r.stdout != "":
				t.Errorf("qtask %s: printed on stdout: %q", strings.Join(args, " "), r.stdout)
			case strings.Contains(line, "\n") || !strings.HasSuffix(r.stderr, "\n"):
				t.Errorf("qtask %s: stderr is not one line: %q", strings.Join(args, " "), r.stderr)
			case !strings.HasPrefix(line, "qtask: ") || strings.HasPrefix(line, "qtask: qtask"):
				t.Errorf("qtask %s: %q does not start with one \"qtask: \"", strings.Join(args, " "), line)
			case !strings.HasSuffix(line, " (see '"+help+" --help')"):
				t.Errorf("qtask %s: %q does not end with (see '%s --help')", strings.Join(args, " "), line, help)
			case containsAny(line, "strconv", "ParseInt", "invalid syntax", "time: ", `" flag: `):
				t.Errorf("qtask %s: %q speaks the parsing library's words", strings.Join(args, " "), line)
			}
		}
	}
	// An agent's hook must never block its agent: a bad flag is exit 1,
	// still one line.
	if r := h.qtask("agent", "hook", "--no-such-flag", "claude"); r.code != exitError || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("qtask agent hook --no-such-flag: exit %d, stderr %q; want exit 1 and one line", r.code, r.stderr)
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
