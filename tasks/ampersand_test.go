package tasks

import (
	"strings"
	"testing"

	"github.com/qtask/qtask/tasks/shellword"
)

// bareAmpersandCases are commands and whether qtask must refuse them for
// ending in a bare "&". They double as the fuzz corpus.
var bareAmpersandCases = []struct {
	cmd    string
	refuse bool
}{
	// Refused: the real work would be forked away from the task.
	{"sleep 1 &", true},
	{"npm run dev &", true},
	{"a &   ", true},
	{"a &\t", true},
	{"a &\n", true},
	{"a &\n\n", true},
	{"cmd & # comment", true},
	{"cmd &# comment right after the operator", true},
	// zsh's "&|" and "&!" background and disown (bash also backgrounds
	// before "!", and calls "&|" a syntax error).
	{"npm run dev &|", true},
	{"npm run dev &!", true},
	{"npm run dev &! # then disowned", true},
	{`zsh -c 'npm run dev &|'`, true},
	{"a |& b", false},
	{"echo '&|' '&!'", false},
	{"a && ! b", false},
	{"a 2>&1 | b", false},
	{"sleep 1 &\n# a comment on the next line", true},
	{"echo $'it\\'s' &", true},
	{"echo \"$( (true); echo '\"' )\" &", true},
	{"echo `echo hi # x` &", true},
	{"cat <<EOF\nit's\nEOF\nsleep 1 &", true},
	{"cat <<E\nx &\nE\necho &", true},
	{"sleep 1 & \\\n", true},
	{"echo a \\\n# &", false},
	{"cat <<-'E'\n\tx &\n\tE\n", false},
	{"echo hi&", true},
	{"x=1; y &", true},
	{"a && b &", true},
	{"a || b &", true},
	{"a | b &", true},
	{"a 2>&1 &", true},
	{"a >&2 &", true},
	{"echo x >&2&", true},
	{"a &>/dev/null &", true},
	{"echo $HOME &", true},
	{`echo "a" &`, true},
	{`echo 'a' &`, true},
	{`echo "it's" &`, true},
	{`echo 'it"s' &`, true},
	{`echo '#' &`, true},
	{`echo "#" &`, true},
	{"echo a#b &", true},
	{"echo ''#x &", true},
	{`echo "a"#b &`, true},
	{`echo a\ #b &`, true},
	{`echo \& &`, true},
	{`echo \\&`, true},  // an escaped backslash, then a bare "&"
	{`echo '\'&`, true}, // a backslash is literal inside single quotes
	{`echo "\"" &`, true},
	{`echo "a\\" &`, true},
	{"echo a \\\n&", true}, // a line continuation joins the "&" to the command
	{`echo $(printf '&') &`, true},
	{`echo "$(printf '&')" &`, true},
	{`echo "$(echo "$(echo ')')")" &`, true},
	{`echo "$(echo "&")" &`, true},
	{"echo `echo '&'` &", true},
	{"echo \"`echo '\"'`\" &", true},
	{"echo $(echo a # )\n) &", true},
	{"echo $((1 + 2)) &", true},
	{"( sleep 1 & ) &", true},
	{"for i in 1 2; do\n  echo $i\ndone &", true},
	{"ls # don't\nsleep 1 &", true},
	{"echo 'multi\nline' &", true},
	// A nested shell's script is read too: the inner shell would
	// background the work and exit at once.
	{`bash -c "npm run dev &"`, true},
	{`sh -c 'x &'`, true},
	{`zsh -c 'x &'`, true},
	{`dash -c 'x &'`, true},
	{`/bin/bash -lc 'npm run dev &'`, true},
	{`sh -ec 'x &' sh arg`, true},
	{`bash -c 'cd web && npm run dev &'`, true},
	{`bash -c 'x &  # later'`, true},
	{`bash -c "nohup x &"`, true},
	{`sh -c 'setsid x &'`, true},
	{`nohup x &`, true},
	{`setsid x &`, true},
	{`nohup bash -c 'x &'`, true},
	{`setsid -w sh -c 'x &'`, true},
	{`exec bash -c 'x &'`, true},
	{`env -i PATH=/bin FOO=1 sh -c 'x &'`, true},
	{`FOO=1 bash -c 'x &'`, true},
	{"make build; bash -c 'x &'", true},
	{"make build && sh -c 'x &'", true},
	{"cat <<EOF\nbash -c 'x &' ok\nEOF\nbash -c 'y &'", true},
	{"bash -c 'x &' 2>&1", true},
	{"bash -c 'x &' &>/dev/null", true},
	{"bash -c 'x &' # a comment", true},
	{"sh -c 'x &' \\\n  arg0", true},
	{`bash -c "sh -c 'x &'"`, true},
	{`bash -c "sh -c 'zsh -c \"bash -c x\\ \\&\"'"`, true},
	{`bash -c 'bash -c "bash -c \"bash -c x\\ \\&\""'`, true},

	// Allowed: no "&" at the end, or one that does not background anything
	// at the top level.
	{"", false},
	{"   ", false},
	{"\n", false},
	{"a && b", false},
	{"a &&", false},
	{"a && b && c", false},
	{`echo \&`, false},
	{`echo a\&`, false},
	{`echo "\&"`, false},
	{`echo '&'`, false},
	{`echo "&"`, false},
	{`echo $'&'`, false},
	{`x='&'`, false},
	{`echo "a &"`, false},
	{`echo 'a &'`, false},
	{"echo 'multi\n&'", false},
	{"echo \"multi\n&\"", false},
	{`echo $(printf '&')`, false},
	{`echo "$(printf '&')"`, false},
	{`echo "$(printf '%s' "&")"`, false},
	{`echo "$(echo '"' &)"`, false},
	{`echo $(echo ')' &)`, false},
	{`echo $(sleep 1 &)`, false},
	{"echo `echo &`", false},
	{"echo \"`echo '&'`\"", false},
	{"sleep 1 & wait", false},
	{"sleep 1 &\nwait", false},
	{"a & b", false},
	{"(sleep 1 &)", false},
	{"a 2>&1", false},
	{"a >&2", false},
	{"a &>/dev/null", false},
	{"a |& b", false},
	{"a |&", false},
	{"echo '#' &&", false},
	{"echo # &", false},
	{"sleep 1 # &", false},
	{"echo ok; # &", false},
	{"echo ok;# &", false},
	{"a >&", false}, // an unfinished redirection, not a background
	{"a <&", false},
	{"echo '&' # &", false},
	{"echo $(printf '&') # &", false},
	{"[[ -n $x && -z $y ]]", false},
	{"(( x & 1 ))", false},
	{"echo $(( 5 & 3 ))", false},
	{"for i in 1 2; do\n  sleep 1 &\ndone", false},
	{`bash -c 'a && b'`, false},
	{`bash -c 'echo "&"'`, false},
	{`bash -c 'echo \&'`, false},
	{`sh -c "echo '&'"`, false},
	{`bash -c 'x & wait'`, false},
	{`bash -c "$CMD &"`, false}, // what runs is the shell's business
	{`bash -c 'x &'; wait`, false},
	{`bash -c 'x &' && echo started`, false},
	{`echo bash -c 'x &'`, false},
	{`bash 'x &'`, false},
	{`bash -x 'x &'`, false},
	{`sh -c`, false},
	{`python -c 'x &'`, false},
	{`(bash -c 'x &')`, false},
	{`bash -c 'x &`, false}, // unterminated: a syntax error
	{"cat <<EOF\nbash -c 'x &'\nEOF", false},
	{"bash -c 'x &' | cat", false},
	{`sh -c 'x &'\`, false}, // the script is "x &\": its last command is \
	{"# bash -c 'x &'", false},
}

func TestEndsWithBareAmpersand(t *testing.T) {
	for _, tc := range bareAmpersandCases {
		got := EndsWithBareAmpersand(tc.cmd)
		if got == tc.refuse {
			continue
		}
		if tc.refuse {
			t.Errorf("EndsWithBareAmpersand(%q) = false: qtask would run it and the real work would escape the task (output, exit code and stop lost)", tc.cmd)
		} else {
			t.Errorf("EndsWithBareAmpersand(%q) = true: qtask would refuse a command that does not end in a bare '&'", tc.cmd)
		}
	}
}

// nestShells wraps script in depth levels of `bash -c '…'`, each level's
// script starting with prefix.
func nestShells(depth int, prefix, script string) string {
	for range depth {
		script = "bash -c '" + strings.ReplaceAll(prefix+script, "'", `'\''`) + "'"
	}
	return script
}

// TestEndsWithBareAmpersandDepth: a nested shell's script is read as deep
// as the leading-sleep rule reads one (shellword.MaxDepth), no deeper.
func TestEndsWithBareAmpersandDepth(t *testing.T) {
	for depth := 1; depth <= shellword.MaxDepth+1; depth++ {
		cmd := nestShells(depth, "", "npm run dev &")
		want := depth <= shellword.MaxDepth
		if got := EndsWithBareAmpersand(cmd); got != want {
			t.Errorf("%d nested shells: refused = %v, want %v\n%s", depth, got, want, cmd)
		}
	}
}

// TestEndsWithBareAmpersandLargeInput runs the check on inputs of about a
// megabyte of nesting, quotes, comments and escapes. The check is meant to
// be one linear pass; a quadratic one would take hours here, so the test's
// own timeout is what catches it. Nothing is timed.
func TestEndsWithBareAmpersandLargeInput(t *testing.T) {
	const depth = 1 << 18
	nested := "echo " + strings.Repeat(`"$(echo `, depth) + `'&'` + strings.Repeat(`)"`, depth)
	flat := strings.Repeat(`a 'b' "c" $(d) \e # f`+"\n", 1<<16)
	cases := []struct {
		name, cmd string
		refuse    bool
	}{
		{"nested quotes and substitutions", nested, false},
		{"nested quotes and substitutions, then &", nested + " &", true},
		{"unclosed nesting", strings.Repeat(`"$(`, depth) + " &", false},
		{"quotes, escapes and comments", flat, false},
		{"quotes, escapes and comments, then &", flat + "sleep 1 &", true},
		{"backslashes", strings.Repeat(`\`, 1<<20) + " &", true},
		{"ampersands", strings.Repeat("a && ", 1<<18) + "b &", true},
		{"a nested shell's long script", "bash -c '" + strings.Repeat("a && ", 1<<18) + "b &'", true},
		{"nested shells, each a long script", nestShells(3, strings.Repeat("a && ", 1<<16), "b &"), true},
		{"nested shells past the bound", nestShells(shellword.MaxDepth+1, strings.Repeat("a && ", 1<<16), "b &"), false},
	}
	for _, tc := range cases {
		if got := EndsWithBareAmpersand(tc.cmd); got != tc.refuse {
			t.Errorf("%s (%d bytes): refused = %v, want %v", tc.name, len(tc.cmd), got, tc.refuse)
		}
	}
}

// plainShell reports whether s uses only characters with no quoting or
// substitution meaning, so appending a " # comment" to it is a comment.
func plainShell(s string) bool {
	for _, c := range []byte(s) {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte(" \t;&|<>=#-", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

func FuzzEndsWithBareAmpersand(f *testing.F) {
	for _, tc := range bareAmpersandCases {
		f.Add(tc.cmd)
	}
	f.Fuzz(func(t *testing.T, s string) {
		refused := EndsWithBareAmpersand(s) // must not panic

		// More commands after "&&" leave nothing bare at the end; text that
		// lands inside an open quote cannot change the answer either.
		if EndsWithBareAmpersand(s+"&&true") && !refused {
			t.Errorf("%q is allowed but refused once \"&&true\" is appended", s)
		}
		// Trailing whitespace never changes what the command ends with,
		// unless a backslash escapes it into the last word (which may be
		// a nested shell's script).
		escaped := (len(s)-len(strings.TrimRight(s, `\`)))%2 == 1
		if got := EndsWithBareAmpersand(s + " \t\n "); got != refused && !escaped {
			t.Errorf("%q: refused = %v, but %v with trailing whitespace", s, refused, got)
		}
		// What comes before a complete "true; " does not change the end.
		if got := EndsWithBareAmpersand("true; " + s); got != refused {
			t.Errorf("%q: refused = %v, but %v after \"true; \"", s, refused, got)
		}
		// A comment does not hide a trailing "&", nor add one, and quotes
		// and substitutions in it mean nothing.
		if plainShell(s) {
			if got := EndsWithBareAmpersand(s + ` # it's "$(x) & ` + "`"); got != refused {
				t.Errorf("%q: refused = %v, but %v with a trailing comment", s, refused, got)
			}
		}
		// Whatever sits inside single quotes (no ' of its own) is an argument.
		if !strings.Contains(s, "'") {
			if EndsWithBareAmpersand("echo '" + s + "'") {
				t.Errorf("echo '%s' refused: the '&' is quoted", s)
			}
			if !EndsWithBareAmpersand("echo '" + s + "' &") {
				t.Errorf("echo '%s' & allowed: the quoted text hid the trailing '&'", s)
			}
		}
		// Likewise inside double quotes without \, $, ` or ".
		if !strings.ContainsAny(s, "\"\\$`") {
			if EndsWithBareAmpersand(`echo "` + s + `"`) {
				t.Errorf(`echo "%s" refused: the '&' is quoted`, s)
			}
			if !EndsWithBareAmpersand(`echo "` + s + `" &`) {
				t.Errorf(`echo "%s" & allowed: the quoted text hid the trailing '&'`, s)
			}
		}
	})
}
