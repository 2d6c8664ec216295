package tmux

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// printfWords is the format that makes printf echo each word NUL-terminated,
// so word boundaries survive even for words holding newlines.
const printfWords = `%s\0`

// shellWords runs what tmux would run for ShellCommand(printf, format, words...):
// tmux first expands formats (which turns "##" into "#"), then hands the string
// to /bin/sh -c. It returns the words the program received.
func shellWords(t testing.TB, words []string) []string {
	t.Helper()
	cmdline := ShellCommand(append([]string{"printf", printfWords}, words...))
	afterTmux := strings.ReplaceAll(cmdline, "##", "#")
	sh := exec.Command("/bin/sh", "-c", afterTmux)
	var stderr bytes.Buffer
	sh.Stderr = &stderr
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("sh -c %q: %v\n%s", afterTmux, err, stderr.Bytes())
	}
	got := strings.Split(string(out), "\x00")
	if got[len(got)-1] != "" {
		t.Fatalf("printf output %q does not end in NUL", out)
	}
	return got[:len(got)-1]
}

// oddHashRun reports whether s holds a run of '#' of odd length, which tmux
// would read as the start of a format (#{...}, #S, #(cmd)...).
func oddHashRun(s string) bool {
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] == '#' {
			run++
			continue
		}
		if run%2 == 1 {
			return true
		}
		run = 0
	}
	return false
}

var nastyWords = []struct {
	name string
	word string
}{
	{"plain", "plain"},
	{"empty", ""},
	{"spaces", "two  spaces and\ttab"},
	{"single quote", "it's"},
	{"only single quotes", "'''"},
	{"quote at both ends", "'quoted'"},
	{"double quotes", `say "hi"`},
	{"dollar var", "$HOME and ${PATH}"},
	{"command substitution", "$(echo pwned) and `echo pwned`"},
	{"backslashes", `a\b\\c\n\0`},
	{"newline", "line1\nline2\n"},
	{"carriage return", "a\rb"},
	{"hash", "# not a comment"},
	{"double hash", "##"},
	{"triple hash", "a###b"},
	{"tmux format", "#{pane_id}"},
	{"tmux shell format", "#(echo pwned)"},
	{"tmux short format", "#S:#I.#P"},
	{"glob", "*.go ? [a-z]"},
	{"tilde", "~root"},
	{"redirection and pipes", "> /dev/null | cat; rm -rf x && y || z &"},
	{"printf directives", "%s %d %% %b"},
	{"leading dash", "--help"},
	{"unicode", "héllo wörld 日本語 😀"},
	{"bidi and zero width", "\u202eevil\u200b"},
	{"escape sequence", "\x1b[31mred\x1b[0m"},
	{"high control bytes", "\x01\x7f"},
	{"invalid utf-8", "\xff\xfe"},
	{"semicolon at end", "echo hi;"},
	{"backslash semicolon", `\;`},
}

func TestShellCommandSurvivesTmuxAndShell(t *testing.T) {
	for _, c := range nastyWords {
		t.Run(c.name, func(t *testing.T) {
			cmdline := ShellCommand([]string{"printf", printfWords, c.word})
			if !strings.HasPrefix(cmdline, "exec ") {
				t.Errorf("ShellCommand = %q, want it to exec the program (no idle shell left in the pane)", cmdline)
			}
			if oddHashRun(cmdline) {
				t.Errorf("ShellCommand = %q has a lone '#': tmux would expand it as a format", cmdline)
			}
			got := shellWords(t, []string{c.word})
			if len(got) != 1 || got[0] != c.word {
				t.Errorf("pipe-pane program got argv %q, want exactly [%q]", got, c.word)
			}
		})
	}
}

func TestShellCommandKeepsWordBoundaries(t *testing.T) {
	var words []string
	for _, c := range nastyWords {
		words = append(words, c.word)
	}
	got := shellWords(t, words)
	if len(got) != len(words) {
		t.Fatalf("program got %d words, want %d: %q", len(got), len(words), got)
	}
	for i := range words {
		if got[i] != words[i] {
			t.Errorf("word %d arrived as %q, want %q", i, got[i], words[i])
		}
	}
}

func TestShellCommandProgramOnly(t *testing.T) {
	if got, want := ShellCommand([]string{"cat"}), "exec 'cat'"; got != want {
		t.Errorf("ShellCommand([cat]) = %q, want %q", got, want)
	}
	// A program path with '#' and a space is quoted and escaped like any word.
	if got, want := ShellCommand([]string{"/opt/my #1/qtask", "_capture"}), "exec '/opt/my ##1/qtask' '_capture'"; got != want {
		t.Errorf("ShellCommand = %q, want %q", got, want)
	}
}

func FuzzShellCommand(f *testing.F) {
	for _, c := range nastyWords {
		f.Add(c.word, "second word")
	}
	f.Add("", "")
	f.Add("#", "'")
	f.Fuzz(func(t *testing.T, a, b string) {
		if strings.ContainsRune(a, 0) || strings.ContainsRune(b, 0) {
			return // argv cannot hold NUL
		}
		cmdline := ShellCommand([]string{"printf", printfWords, a, b})
		if oddHashRun(cmdline) {
			t.Fatalf("ShellCommand(%q, %q) = %q has a lone '#' tmux would expand", a, b, cmdline)
		}
		if len(a)+len(b) > 200 {
			return // keep the fuzzer fast: sh only for small inputs
		}
		got := shellWords(t, []string{a, b})
		if len(got) != 2 || got[0] != a || got[1] != b {
			t.Fatalf("argv [%q %q] arrived as %q", a, b, got)
		}
	})
}

// pipe-pane's command reaches /bin/sh as written: tmux halves every run of
// '#' (a lone one would start a format) and takes a final ";" as the end of
// its own command unless escaped.
func TestPipeCommandArgKeepsTheCommand(t *testing.T) {
	for _, c := range nastyWords {
		if strings.ContainsRune(c.word, 0) {
			continue
		}
		arg := pipeCommandArg(c.word)
		if oddHashRun(arg) {
			t.Errorf("%s: %q has a lone '#': tmux would expand it as a format", c.name, arg)
		}
		if strings.HasSuffix(arg, ";") && !strings.HasSuffix(arg, `\;`) {
			t.Errorf("%s: %q ends in a bare ';', which would end tmux's command", c.name, arg)
		}
	}
	if got, want := pipeCommandArg("echo #{pane_id} ##;"), `echo ##{pane_id} ####\;`; got != want {
		t.Errorf("pipeCommandArg = %q, want %q", got, want)
	}
}

// An agent's task window shows the start of its command: one line, cut
// at max characters, with nothing a window list (or gotmux's "-:-" split
// of it) could misread.
func TestWindowLabel(t *testing.T) {
	cases := []struct{ text, want string }{
		{"npm test", "npm test"},
		{"  go test ./...\nsecond line", "go test ./..."},
		{"echo a-:-b\x1b[31m\tz", "echo a-_-b [31m z"},
		{"make all-of-the-targets-in-this-long-makefile", "make all-of-the-targets-in-this-…"},
		{"ünïcödé ✓", "ünïcödé ✓"},
		{"bad \xff byte", "bad   byte"},
	}
	for _, c := range cases {
		if got := WindowLabel(c.text, 32); got != c.want {
			t.Errorf("WindowLabel(%q, 32) = %q, want %q", c.text, got, c.want)
		}
	}
}
