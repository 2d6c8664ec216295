package shellhooks

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tmux"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		data string
		pid  int
		cmd  string // "" when the pane counts as idle (ok=false)
	}{
		{"bash history entry", "123 h\n  42  make -j8\n", 123, "make -j8"},
		{"bash history entry, five-wide number", "123 h\n   42  make -j8\n", 123, "make -j8"},
		{"bash history entry, six-digit number", "123 h\n123456  make -j8\n", 123, "make -j8"},
		{"command line", "123 c\nls -la\n", 123, "ls -la"},
		{"inner spacing kept", "9 c\necho  'a  b'\n", 9, "echo  'a  b'"},
		{"multi-line command", "123 c\nfor i in 1 2; do\n  echo $i\ndone\n", 123, "for i in 1 2; do\n  echo $i\ndone"},
		{"multi-line history entry", "123 h\n    7  for i in 1 2; do\n  echo $i\ndone\n", 123, "for i in 1 2; do\n  echo $i\ndone"},
		{"command line starting with digits is not a history number", "123 c\n7z x a.7z\n", 123, "7z x a.7z"},
		{"history entry starting with digits", "123 h\n   42  7z x a.7z\n", 123, "7z x a.7z"},
		{"no newline after the command", "123 c\nls", 123, "ls"},

		{"empty file (the prompt hook cleared it)", "", 0, ""},
		{"garbage", "garbage", 0, ""},
		{"missing newline after the header", "123 c", 0, ""},
		{"missing pid", "\nls\n", 0, ""},
		{"missing pid before the kind", " c\nls\n", 0, ""},
		{"negative pid", "-5 c\nls\n", 0, ""},
		{"zero pid", "0 c\nls\n", 0, ""},
		{"non-numeric pid", "abc c\nls\n", 0, ""},
		{"pid with trailing letters", "12a c\nls\n", 0, ""},
		{"pid out of range", "99999999999999999999 c\nls\n", 0, ""},
		{"empty command", "123 c\n\n", 0, ""},
		{"whitespace-only command", "123 c\n   \n", 0, ""},
		{"tab-only command", "123 c\n\t\n", 0, ""},
		{"empty bash history", "123 h\n", 0, ""},
		{"history number without a command", "123 h\n   42  \n", 0, ""},
	}
	for _, tc := range cases {
		fg, ok := parse(tc.data)
		switch {
		case tc.cmd == "" && ok:
			t.Errorf("%s: %q parsed as command %q of shell %d: promote would adopt a pane that runs nothing", tc.name, tc.data, fg.Command, fg.ShellPID)
		case tc.cmd != "" && !ok:
			t.Errorf("%s: %q not parsed: promote would say nothing runs in the pane", tc.name, tc.data)
		case ok && (fg.ShellPID != tc.pid || fg.Command != tc.cmd):
			t.Errorf("%s: %q parsed as shell %d running %q, want shell %d running %q", tc.name, tc.data, fg.ShellPID, fg.Command, tc.pid, tc.cmd)
		}
	}
}

func TestStripHistoryNumber(t *testing.T) {
	cases := []struct{ line, want string }{
		{"   42  make", "make"},
		{"  42  make", "make"},
		{"42  make", "make"},
		{"123456  make -j8", "make -j8"},
		{"   42  make  -j8", "make  -j8"},
		{"   42  ", ""},
		{"   42", ""},
		{"make", "make"},
		{"make 42", "make 42"},
		{"", ""},
	}
	for _, tc := range cases {
		if got := stripHistoryNumber(tc.line); got != tc.want {
			t.Errorf("stripHistoryNumber(%q) = %q, want %q: the task would show the wrong command", tc.line, got, tc.want)
		}
	}
}

func TestRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "panes")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2024, 3, 9, 14, 30, 5, 123456000, time.UTC)
	write := func(name, content string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, started, started); err != nil {
			t.Fatal(err)
		}
	}
	write("12", "4321 c\nmake -j8\n")
	write("3", "")
	write("4", "4321 h\n")
	if err := os.Mkdir(filepath.Join(dir, "5"), 0o700); err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name    string
		dir     string
		pane    tmux.PaneID
		ok      bool
		wantErr bool
	}{
		{"running command", dir, "%12", true, false},
		{"pane at its prompt", dir, "%3", false, false},
		{"bash hook with empty history", dir, "%4", false, false},
		{"pane without hooks", dir, "%99", false, false},
		{"no pane directory", filepath.Join(dir, "missing"), "%12", false, false},
		{"unreadable state", dir, "%5", false, true},
	}
	for _, tc := range cases {
		fg, ok, err := Read(tc.dir, tc.pane)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: Read(%s) error = %v, want error: %v", tc.name, tc.pane, err, tc.wantErr)
			continue
		}
		if ok != tc.ok {
			t.Errorf("%s: Read(%s) ok = %v, want %v (promote would misjudge whether a command runs)", tc.name, tc.pane, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if fg.ShellPID != 4321 || fg.Command != "make -j8" {
			t.Errorf("%s: Read(%s) = shell %d running %q, want shell 4321 running %q", tc.name, tc.pane, fg.ShellPID, fg.Command, "make -j8")
		}
		if !fg.StartedAt.Equal(started) {
			t.Errorf("%s: Read(%s) StartedAt = %v, want the file's mtime %v: the adopted task would show a wrong start", tc.name, tc.pane, fg.StartedAt, started)
		}
	}
}

func TestPrepare(t *testing.T) {
	state := t.TempDir()
	for range 2 { // a second call finds the directory in place
		if err := Prepare(state); err != nil {
			t.Fatalf("Prepare: %v: the hooks could not record anything", err)
		}
	}
	fi, err := os.Stat(Dir(state))
	if err != nil {
		t.Fatalf("Prepare did not create the pane directory: %v", err)
	}
	if !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Errorf("pane directory mode = %v, want a private directory (drwx------): other users could read typed commands", fi.Mode())
	}
}

func TestPromotedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	const pane = tmux.PaneID("%7")
	if err := MarkPromoted(dir, pane, "ab12cd34ef"); err != nil {
		t.Fatalf("MarkPromoted: %v", err)
	}
	if err := MarkPromoted(dir, pane, "ab12cd34"); err != nil { // a shorter id replaces it
		t.Fatalf("MarkPromoted again: %v", err)
	}
	path := filepath.Join(dir, "7.promoted")
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("no promoted mark at %s: the prompt hook would not report the exit code: %v", path, err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Errorf("promoted mark mode = %v, want a private regular file (-rw-------)", fi.Mode())
	}
	id, err := TakePromoted(dir, pane)
	if err != nil || id != "ab12cd34" {
		t.Fatalf("TakePromoted = %q, %v; want %q: the exit code would go to the wrong task", id, err, "ab12cd34")
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("promoted mark still there after TakePromoted (%v): the next command in the pane would settle the task again", err)
	}
	if id, err := TakePromoted(dir, pane); err == nil {
		t.Errorf("second TakePromoted = %q, nil; want an error: a plain command would be reported as an adopted one", id)
	}
	if id, err := TakePromoted(dir, "%8"); err == nil {
		t.Errorf("TakePromoted of a pane never marked = %q, nil; want an error", id)
	}
}

func TestMarkPromotedRefusesSymlink(t *testing.T) {
	cases := []struct {
		name   string
		target string // relative to the test dir; "" leaves it absent
		before string
	}{
		{"symlink to an existing file", "victim", "keep me\n"},
		{"dangling symlink", "", ""},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		victim := filepath.Join(dir, "victim")
		if tc.target != "" {
			if err := os.WriteFile(victim, []byte(tc.before), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(victim, filepath.Join(dir, "7.promoted")); err != nil {
			t.Fatal(err)
		}
		if err := MarkPromoted(dir, "%7", "ab12cd34"); err == nil {
			t.Errorf("%s: MarkPromoted followed the symlink: anyone able to plant it could overwrite another file", tc.name)
		}
		data, err := os.ReadFile(victim)
		switch {
		case tc.target == "" && !errors.Is(err, fs.ErrNotExist):
			t.Errorf("%s: MarkPromoted created the symlink's target (%v)", tc.name, err)
		case tc.target != "" && string(data) != tc.before:
			t.Errorf("%s: symlink target changed to %q, want %q", tc.name, data, tc.before)
		}
	}
}

func TestSnippetUnknownShell(t *testing.T) {
	for _, shell := range []string{"tcsh", "", "Bash", "sh"} {
		snip, err := Snippet(shell, "/usr/bin/qtask", "/tmp/state")
		if err == nil {
			t.Errorf("Snippet(%q) = %d bytes, nil: `qtask init %s` would print hooks for a shell qtask does not support", shell, len(snip), shell)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, strconv.Quote(shell)) || !strings.Contains(msg, "bash, zsh, fish") {
			t.Errorf("Snippet(%q) error %q should name the shell and the valid ones (bash, zsh, fish)", shell, msg)
		}
	}
}

// awkwardPaths are binary and state paths with every character the hook
// quoting must survive.
var awkwardPaths = []string{
	"",
	"/usr/local/bin/qtask",
	"/home/me/my tools/qtask",
	"/tmp/it's",
	"/tmp/''",
	"/tmp/'",
	`/tmp/"quoted"`,
	"/tmp/$HOME/$(id)/`id`",
	`/tmp/back\slash`,
	`/tmp/trailing\`,
	`/tmp/\'`,
	`/tmp/\\'\\`,
	"/tmp/#hash",
	"/tmp/semi;colon&amp|pipe",
	"/tmp/glob*?[a]{b,c}~",
	"/tmp/new\nline",
	"/tmp/tab\tand ünïcode",
	`/opt/a b'c"d$e\f#g`,
}

// shellCmd runs script in shell argv (interactive or not) in a fresh
// session without a terminal and a minimal environment plus env.
func shellCmd(t *testing.T, argv []string, script string, env ...string) (stdout, stderr string) {
	t.Helper()
	testenv.NeedProgram(t, argv[0])
	home := t.TempDir()
	cmd := exec.Command(argv[0], append(argv[1:], script)...)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=dumb",
		"XDG_CONFIG_HOME=" + home, "XDG_DATA_HOME=" + home, "XDG_CACHE_HOME=" + home,
	}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\nscript:\n%s\nstdout:\n%s\nstderr:\n%s", argv[0], err, script, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

func TestQuoteRoundTrip(t *testing.T) {
	shells := []struct {
		name  string
		argv  []string
		quote func(string) string
	}{
		{"bash", []string{"bash", "--norc", "--noprofile", "-c"}, posixQuote},
		{"zsh", []string{"zsh", "-f", "-c"}, posixQuote},
		{"zsh with rc_quotes", []string{"zsh", "-f", "-o", "rcquotes", "-c"}, posixQuote},
		{"fish", []string{"fish", "--no-config", "-c"}, fishQuote},
	}
	for _, sh := range shells {
		t.Run(sh.name, func(t *testing.T) {
			for _, s := range awkwardPaths {
				got, _ := shellCmd(t, sh.argv, "printf '%s' "+sh.quote(s))
				if got != s {
					t.Errorf("%s reads the quoted path %s as %q, want %q: the hooks would call a wrong binary or write to a wrong state dir", sh.name, sh.quote(s), got, s)
				}
			}
		})
	}
}

// hookShells are the interactive and non-interactive invocations of each
// shell, with no user configuration read.
var hookShells = []struct {
	name                string
	interactive, script []string
	load                string // loads $SNIP, sending its output to $OUT/load
}{
	{
		name:        "bash",
		interactive: []string{"bash", "--norc", "--noprofile", "-i", "-c"},
		script:      []string{"bash", "--norc", "--noprofile", "-c"},
		load:        `{ eval "$SNIP"; } >>"$OUT/load" 2>&1`,
	},
	{
		name:        "zsh",
		interactive: []string{"zsh", "-f", "-i", "-c"},
		script:      []string{"zsh", "-f", "-c"},
		load:        `{ eval "$SNIP"; } >>"$OUT/load" 2>&1`,
	},
	{
		name:        "fish",
		interactive: []string{"fish", "--no-config", "-i", "-c"},
		script:      []string{"fish", "--no-config", "-c"},
		load:        `begin; printf '%s\n' $SNIP | source; end >>$OUT/load 2>&1`,
	},
}

// probes print one line per hook artifact that exists; they print nothing
// when the snippet left the shell alone.
var probes = map[string]string{
	"bash": `declare -F __qtask_preexec __qtask_precmd __qtask_debug __qtask_arm
[[ -v __qtask_hooked ]] && echo hooked
[[ -v PROMPT_COMMAND ]] && echo "PROMPT_COMMAND=${PROMPT_COMMAND[*]}"
trap -p DEBUG`,
	"zsh": `for f in __qtask_preexec __qtask_precmd; do (( $+functions[$f] )) && echo "$f: function"; done
(( $+__qtask_hooked )) && echo hooked
(( $#preexec_functions + $#precmd_functions )) && echo "hooks: $preexec_functions $precmd_functions"
:`,
	"fish": `functions -q __qtask_preexec; and echo __qtask_preexec
functions -q __qtask_postexec; and echo __qtask_postexec
set -q __qtask_hooked; and echo hooked
true`,
}

func TestSnippetLeavesOtherShellsAlone(t *testing.T) {
	for _, sh := range hookShells {
		t.Run(sh.name, func(t *testing.T) {
			name := sh.name
			snip, err := Snippet(name, "/usr/bin/qtask", "/tmp/qtask-state")
			if err != nil {
				t.Fatal(err)
			}
			cases := []struct {
				what string
				argv []string
				env  []string
			}{
				{"an interactive shell outside tmux", sh.interactive, nil},
				{"a script inside tmux", sh.script, []string{"TMUX_PANE=%7"}},
			}
			for _, tc := range cases {
				out := t.TempDir()
				stdout, _ := shellCmd(t, tc.argv, sh.load+"\n"+probes[name],
					append(tc.env, "SNIP="+snip, "OUT="+out)...)
				if stdout != "" {
					t.Errorf("%s hooks loaded in %s defined:\n%s", name, tc.what, stdout)
				}
				if load, err := os.ReadFile(filepath.Join(out, "load")); err != nil || len(load) != 0 {
					t.Errorf("%s hooks loaded in %s printed %q (%v), want nothing", name, tc.what, load, err)
				}
			}
		})
	}
}

// runHooks is what each shell does around one command the user types,
// driving the hooks as the shell would: the preexec hook with the command
// "make -j8", a copy of the pane file while it runs, then the prompt hook
// after the command exits with status 3, with the pane marked promoted.
var runHooks = map[string]string{
	// bash: history has the line before the DEBUG trap runs it; the prompt
	// (PROMPT_COMMAND) arms the hook for the next command.
	"bash": `echo "pid=$$"
history -s "make -j8"
__qtask_arm
true
cp "$STATE/panes/7" "$OUT/running"
: >"$STATE/panes/7.promoted"
(exit 3)
__qtask_precmd
echo "prompt status=$?"`,
	"zsh": `echo "pid=$$"
for f in $preexec_functions; do "$f" "make -j8" "make -j8" "make -j8"; done
cp "$STATE/panes/7" "$OUT/running"
: >"$STATE/panes/7.promoted"
(exit 3)
__qtask_precmd
echo "preexec_functions=$preexec_functions"
echo "precmd_functions=$precmd_functions"`,
	"fish": `echo "pid=$fish_pid"
emit fish_preexec "make -j8"
cp $STATE/panes/7 $OUT/running
true >$STATE/panes/7.promoted
sh -c 'exit 3'
emit fish_postexec "make -j8"
echo postexec done`,
}

// wantAfterHooks is what the runHooks scripts print after "pid=…".
var wantAfterHooks = map[string]string{
	"bash": "prompt status=3\n",
	"zsh":  "preexec_functions=__qtask_preexec\nprecmd_functions=__qtask_precmd\n",
	"fish": "postexec done\n",
}

var wantDefined = map[string]string{
	"bash": "__qtask_preexec\n__qtask_precmd\n__qtask_debug\n__qtask_arm\nhooked\nPROMPT_COMMAND=__qtask_precmd\n__qtask_arm\ntrap -- '__qtask_debug' DEBUG\n",
	"zsh":  "__qtask_preexec: function\n__qtask_precmd: function\nhooked\nhooks: __qtask_preexec __qtask_precmd\n",
	"fish": "__qtask_preexec\n__qtask_postexec\nhooked\n",
}

// TestSnippetInTmuxPane loads each shell's hooks twice in an interactive
// shell inside a tmux pane, with a qtask binary and state dir whose paths
// need quoting, and checks what the hooks define, record and report.
func TestSnippetInTmuxPane(t *testing.T) {
	for _, sh := range hookShells {
		t.Run(sh.name, func(t *testing.T) {
			name := sh.name
			base := filepath.Join(t.TempDir(), `we ird'"$x\#`)
			state := filepath.Join(base, "state dir")
			if err := Prepare(state); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(base, "q't $bin")
			if err := os.WriteFile(bin, []byte("#!/bin/sh\nprintf '%s\\n' \"$@\" >\"$ARGS\"\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			snip, err := Snippet(name, bin, state)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			args := filepath.Join(out, "args")
			script := sh.load + "\n" + sh.load + "\n" + probes[name] + "\n" + runHooks[name]
			stdout, stderr := shellCmd(t, sh.interactive, script,
				"SNIP="+snip, "OUT="+out, "STATE="+state, "ARGS="+args, "TMUX_PANE=%7")

			defined, rest, found := strings.Cut(stdout, "pid=")
			if defined != wantDefined[name] {
				t.Errorf("%s hooks in a tmux pane defined:\n%s\nwant:\n%s", name, defined, wantDefined[name])
			}
			if load, err := os.ReadFile(filepath.Join(out, "load")); err != nil || len(load) != 0 {
				t.Errorf("%s hooks printed %q (%v) while loading, want nothing", name, load, err)
			}
			if !found {
				t.Errorf("%s: the hook run did not complete:\n%s\nstderr:\n%s", name, stdout, stderr)
				return
			}
			pidText, after, _ := strings.Cut(rest, "\n")
			if after != wantAfterHooks[name] {
				t.Errorf("%s hook run printed:\n%s\nwant:\n%s", name, after, wantAfterHooks[name])
			}

			// While the command runs, the pane file names the shell and command.
			running, err := os.ReadFile(filepath.Join(out, "running"))
			if err != nil {
				t.Errorf("%s preexec hook wrote no pane file under %q: promote would find nothing running (%v)", name, state, err)
			} else if fg, ok := parse(string(running)); !ok || strconv.Itoa(fg.ShellPID) != pidText || fg.Command != "make -j8" {
				t.Errorf("%s preexec hook wrote %q: parsed as shell %d running %q (ok=%v), want shell %s running %q",
					name, running, fg.ShellPID, fg.Command, ok, pidText, "make -j8")
			}

			// After it, the prompt hook reported the status to qtask and
			// cleared the pane file.
			gotArgs, err := os.ReadFile(args)
			wantArgs := []string{"_pane-done", "--state-dir", state, "--status", "3"}
			if err != nil {
				t.Errorf("%s prompt hook did not run %q for a promoted pane: the task would never settle (%v)", name, bin, err)
			} else if got := strings.Split(strings.TrimSuffix(string(gotArgs), "\n"), "\n"); !slices.Equal(got, wantArgs) {
				t.Errorf("%s prompt hook ran qtask with %q, want %q", name, got, wantArgs)
			}
			if _, ok, err := Read(Dir(state), "%7"); ok || err != nil {
				t.Errorf("%s: after the prompt hook the pane still reads as running (ok=%v, err=%v): a second promote would adopt a finished command", name, ok, err)
			}
		})
	}
}

// TestBashHooksKeepExistingHooks loads the bash hooks into shells that
// already have a prompt command or a DEBUG trap: those keep running.
func TestBashHooksKeepExistingHooks(t *testing.T) {
	snip, err := Snippet("bash", "/usr/bin/qtask", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, setup, probe, want string
	}{
		{
			name:  "PROMPT_COMMAND string",
			setup: `PROMPT_COMMAND='history -a'`,
			probe: `printf '[%s]' "${PROMPT_COMMAND[@]}"`,
			want:  "[__qtask_precmd\nhistory -a\n__qtask_arm]",
		},
		{
			// pyenv-virtualenv leaves one ending in ';'.
			name:  "PROMPT_COMMAND string ending in ';'",
			setup: `PROMPT_COMMAND='history -a;'`,
			probe: `bash -n <<<"$PROMPT_COMMAND" && echo valid`,
			want:  "valid\n",
		},
		{
			name:  "PROMPT_COMMAND string ending in '&'",
			setup: `PROMPT_COMMAND='true &'`,
			probe: `bash -n <<<"$PROMPT_COMMAND" && echo valid`,
			want:  "valid\n",
		},
		{
			name:  "PROMPT_COMMAND array",
			setup: `PROMPT_COMMAND=('history -a' 'echo "done"')`,
			probe: `printf '[%s]' "${PROMPT_COMMAND[@]}"`,
			want:  `[__qtask_precmd][history -a][echo "done"][__qtask_arm]`,
		},
		{
			name:  "DEBUG trap with quotes",
			setup: `trap 'printf "%s|" "it'\''s: $BASH_COMMAND" >>"$OUT/prev"' DEBUG`,
			probe: `rm -f "$OUT/prev"; echo marker >/dev/null; cat "$OUT/prev"`,
			want:  "it's: echo marker > /dev/null|it's: cat \"$OUT/prev\"|",
		},
	}
	for _, tc := range cases {
		out := t.TempDir()
		stdout, _ := shellCmd(t, []string{"bash", "--norc", "--noprofile", "-i", "-c"},
			tc.setup+"\n"+`eval "$SNIP"`+"\n"+tc.probe, "SNIP="+snip, "OUT="+out, "TMUX_PANE=%7")
		if stdout != tc.want {
			t.Errorf("%s: after loading the hooks the shell has %q, want %q: the user's own prompt hooks would break", tc.name, stdout, tc.want)
		}
	}
}

func TestForget(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		pane  string
		files map[string]string
		left  []string
	}{
		{"claim and dead shell's file go", "%7", map[string]string{
			"7.promoted": "ab12cd34\n", "7": strconv.Itoa(dead.Process.Pid) + " c\nmake\n",
		}, nil},
		{"another task's claim stays", "%7", map[string]string{"7.promoted": "ffffffff\n"}, []string{"7.promoted"}},
		{"a live shell's file stays", "%7", map[string]string{"7": strconv.Itoa(os.Getpid()) + " c\nmake\n"}, []string{"7"}},
		{"an idle pane's file stays", "%7", map[string]string{"7": ""}, []string{"7"}},
		{"other panes untouched", "%7", map[string]string{"8.promoted": "ab12cd34\n"}, []string{"8.promoted"}},
		{"no pane id", "", map[string]string{"7.promoted": "ab12cd34\n"}, []string{"7.promoted"}},
		{"a path is no pane id", "%7/../8", map[string]string{"8.promoted": "ab12cd34\n"}, []string{"8.promoted"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range c.files {
				write(dir, name, text)
			}
			Forget(dir, &tasks.Task{ID: "ab12cd34", PaneID: c.pane})
			entries, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			if !slices.Equal(left, c.left) {
				t.Errorf("left %q, want %q", left, c.left)
			}
		})
	}
}

// Every shell's snippet calls the hidden command the CLI defines, with the
// flag it parses: a rename on one side alone would leave promoted commands
// running forever in the list.
func TestSnippetsCallThePaneDoneCommand(t *testing.T) {
	want := tasks.PaneDoneVerb + " --" + tasks.StateDirFlag + " "
	for _, shell := range []string{"bash", "zsh", "fish"} {
		text, err := Snippet(shell, "/usr/bin/qtask", "/state")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, want) {
			t.Errorf("the %s snippet never runs %q", shell, want)
		}
	}
}
