package agent

import "strings"

// ShellQuote quotes s as one word for the POSIX shells agents and their
// hooks run command lines with (sh, bash, zsh): bare when it holds only
// characters no such shell treats specially, else in single quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
