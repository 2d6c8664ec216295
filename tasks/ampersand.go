package tasks

import (
	"path/filepath"
	"strings"

	"github.com/qtask/qtask/tasks/shellword"
)

// EndsWithBareAmpersand reports whether a shell command string ends in a
// bare "&", which would fork the real work away from the task qtask tracks
// (qtask already is the backgrounding), as shellword.LastCommand reads
// it: "&&", "\&", a quoted '&' and "$(printf '&')" do not count, and a
// trailing "# comment" does not hide the "&". When the last command runs
// a script with a shell's -c (`bash -c "npm run dev &"`, also behind
// `nohup`, `setsid`, `exec`, `env` or assignments), that script is read
// the same way, as deep as shellword.MaxDepth: the inner shell would
// background the work and exit at once.
func EndsWithBareAmpersand(cmd string) bool {
	return endsWithBareAmpersand(cmd, 0)
}

func endsWithBareAmpersand(cmd string, depth int) bool {
	last, background := shellword.LastCommand(cmd)
	if background || depth >= shellword.MaxDepth {
		return background
	}
	words, _ := shellword.FirstCommand(last)
	script, ok := shellword.Script(skipLaunchers(words))
	return ok && endsWithBareAmpersand(script, depth+1)
}

// skipLaunchers drops what stands before the program a command runs:
// assignments (X=1) and the commands that run the rest of the line in
// the same process or in one that outlives the line anyway (nohup,
// setsid, exec, env, command), with their options.
func skipLaunchers(words []shellword.Word) []shellword.Word {
	launcher := false
	for len(words) > 0 && words[0].Literal {
		w := words[0].Text
		switch {
		case filepath.Base(w) == "nohup", filepath.Base(w) == "setsid", w == "exec", filepath.Base(w) == "env", w == "command":
			launcher = true
		case launcher && strings.HasPrefix(w, "-"):
		case isAssignment(w):
		default:
			return words
		}
		words = words[1:]
	}
	return words
}

// isAssignment reports whether w is NAME=value.
func isAssignment(w string) bool {
	name, _, ok := strings.Cut(w, "=")
	if !ok || name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	return strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == ""
}
