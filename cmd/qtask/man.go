package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// NewCmdMan builds `qtask man DIR`, which writes a man page per command
// (qtask.1, qtask-run.1, …) generated from the commands' own help, so the
// pages never drift from it. The pages are written here rather than by
// cobra's doc package: that one converts through a markdown renderer and
// a YAML library whose start-up every qtask invocation paid for (about a
// fifth of a `qtask run --bg`, bench/run-bg.sh).
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
			if dir == "" { // an unset variable: refused like an empty task id
				return usageErrorf("DIR is empty: give the directory to write the pages into, e.g. ~/.local/share/man/man1")
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			if err := writeManTree(cmd.Root(), dir); err != nil {
				return fmt.Errorf("man pages: %w", err)
			}
			_, err := fmt.Fprintf(deps.IO.Out, "Wrote man pages to %s\n", displayValue(dir))
			return err
		},
	}
}

// writeManTree writes the page of cmd and of every command under it that
// --help lists (hidden and internal ones get none).
func writeManTree(cmd *cobra.Command, dir string) error {
	cmd.InitDefaultHelpFlag() // cobra adds -h only to the command it runs
	for _, sub := range cmd.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := writeManTree(sub, dir); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, manName(cmd)+".1"), []byte(manPage(cmd)), 0o644)
}

// manName is "qtask-agent-inbox" for `qtask agent inbox`.
func manName(cmd *cobra.Command) string {
	return strings.ReplaceAll(cmd.CommandPath(), " ", "-")
}

// manPage is one command's page in man(7) roff.
func manPage(cmd *cobra.Command) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".nh\n.TH \"QTASK\" \"1\" \"\" \"qtask %s\" \"\"\n", roffText(version))
	// NAME is what apropos and whatis read: "name - summary".
	fmt.Fprintf(&b, ".SH NAME\n%s - %s\n", manName(cmd), roffText(cmd.Short))
	fmt.Fprintf(&b, ".SH SYNOPSIS\n\\fB%s\\fP\n", roffText(cmd.UseLine()))
	desc := cmd.Long
	if desc == "" {
		desc = cmd.Short
	}
	b.WriteString(".SH DESCRIPTION\n")
	for _, para := range strings.Split(strings.TrimSpace(desc), "\n\n") {
		fmt.Fprintf(&b, ".PP\n%s\n", roffText(para))
	}
	manFlags(&b, "OPTIONS", cmd.NonInheritedFlags())
	manFlags(&b, "OPTIONS INHERITED FROM PARENT COMMANDS", cmd.InheritedFlags())
	if cmd.Example != "" {
		fmt.Fprintf(&b, ".SH EXAMPLE\n.EX\n%s\n.EE\n", roffText(strings.TrimRight(cmd.Example, "\n")))
	}
	var see []string
	if cmd.HasParent() {
		see = append(see, manName(cmd.Parent()))
	}
	for _, sub := range cmd.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			see = append(see, manName(sub))
		}
	}
	if len(see) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, name := range see {
			if i > 0 {
				b.WriteString(",\n")
			}
			fmt.Fprintf(&b, "\\fB%s\\fP(1)", name)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// manFlags lists a flag set under heading, one tagged paragraph a flag.
func manFlags(b *strings.Builder, heading string, flags *pflag.FlagSet) {
	first := true
	flags.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if first {
			fmt.Fprintf(b, ".SH %s\n", heading)
			first = false
		}
		b.WriteString(".TP\n")
		if f.Shorthand != "" && f.ShorthandDeprecated == "" {
			fmt.Fprintf(b, "\\fB-%s\\fP, ", roffText(f.Shorthand))
		}
		fmt.Fprintf(b, "\\fB--%s\\fP", roffText(f.Name))
		name, usage := pflag.UnquoteUsage(f)
		if name != "" {
			fmt.Fprintf(b, " \\fI%s\\fP", roffText(name))
		}
		b.WriteString("\n")
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(b, "%s\n", roffText(usage))
	})
}

// roffText makes text safe as roff input: backslashes print as
// themselves, and no line is taken for a request (a leading . or ').
func roffText(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			lines[i] = `\&` + l
		}
	}
	return strings.Join(lines, "\n")
}
