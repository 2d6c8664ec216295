package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// --version and -v print what `qtask version` does.
func TestVersionFlags(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	want := h.mustQtask("version")
	if !strings.HasPrefix(want, "qtask ") {
		t.Fatalf("qtask version: %q", want)
	}
	for _, flag := range []string{"--version", "-v"} {
		if got := h.mustQtask(flag); got != want {
			t.Errorf("qtask %s printed %q, want %q", flag, got, want)
		}
	}
}

// bashComplete completes the words of line (the last one being completed)
// with qtask's generated bash completion script, as bash would on Tab,
// with the bash-completion package loaded where it is installed (without
// it: TestBashCompletionWithoutTheBashCompletionPackage).
func (h *harness) bashComplete(line ...string) []string {
	h.t.Helper()
	script := filepath.Join(h.root, "qtask.bash")
	if err := os.WriteFile(script, []byte(h.mustQtask("completion", "bash")), 0o600); err != nil {
		h.t.Fatal(err)
	}
	words := make([]string, len(line))
	for i, w := range line {
		words[i] = "'" + w + "'"
	}
	drive := `[ -r /usr/share/bash-completion/bash_completion ] && source /usr/share/bash-completion/bash_completion
source "$1"
COMP_WORDS=(` + strings.Join(words, " ") + `)
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
__start_qtask qtask "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"`
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", drive, "bash", script)
	cmd.Env = h.env
	// Outside a real Tab, the script's compopt complains on stderr.
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("bash completion of %q: %v\n%s", line, err, out)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			got = append(got, l)
		}
	}
	return got
}

// Tab after `qtask stop` offers the running tasks' ids (a finished one
// would be refused), after `qtask logs` every task's, and a typed prefix
// narrows them.
func TestBashCompletesTaskIDs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	running := h.start("sleep 60")
	done := h.wait(h.start("true").ID)
	if got := h.bashComplete("qtask", "stop", ""); len(got) != 1 || got[0] != running.ID {
		t.Errorf("qtask stop <Tab>: %q, want only the running task %s", got, running.ID)
	}
	got := h.bashComplete("qtask", "logs", "")
	if len(got) != 2 || !strings.Contains(strings.Join(got, " "), running.ID) || !strings.Contains(strings.Join(got, " "), done.ID) {
		t.Errorf("qtask logs <Tab>: %q, want both tasks", got)
	}
	if got := h.bashComplete("qtask", "logs", done.ID[:3]); len(got) != 1 || got[0] != done.ID && !strings.HasPrefix(done.ID, got[0]) {
		t.Errorf("qtask logs %s<Tab>: %q, want %s", done.ID[:3], got, done.ID)
	}
	if got := h.bashComplete("qtask", "sta"); strings.Join(got, " ") != "status status-line" {
		t.Errorf("qtask sta<Tab>: %q", got)
	}
	h.mustQtask("stop", running.ID)
}

// qtaskOnTTY runs qtask with its stdout on a terminal cols wide and
// returns what it printed there.
func (h *harness) qtaskOnTTY(cols uint16, extraEnv []string, args ...string) string {
	h.t.Helper()
	master, tty := openPTY(h.t, 40, cols)
	defer master.Close()
	cmd := exec.Command(qtaskBin, args...)
	cmd.Env = append(append([]string{}, h.env...), extraEnv...)
	cmd.Dir = h.root
	cmd.Stdout = tty
	if err := cmd.Run(); err != nil {
		h.t.Fatalf("qtask %v on a terminal: %v", args, err)
	}
	tty.Close()
	out, _ := io.ReadAll(master) // EIO once the terminal is closed and drained
	return strings.ReplaceAll(string(out), "\r\n", "\n")
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// ls fits the terminal (COMMAND is cut, never STATUS), colours the status
// there (not with NO_COLOR, not into a pipe), shows NAME only when a task
// has one and OUTPUT only with --wide; -q prints ids.
func TestLsFitsTheTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := "echo " + strings.Repeat("word ", 30) + "; exit 127"
	failed := h.wait(h.start(long).ID)
	for _, line := range strings.Split(strings.TrimSpace(h.qtaskOnTTY(60, nil, "ls")), "\n") {
		plain := sgr.ReplaceAllString(line, "")
		if n := utf8.RuneCountInString(plain); n > 60 {
			t.Errorf("ls on a 60-column terminal printed a %d-column line: %q", n, plain)
		}
		if strings.HasPrefix(plain, failed.ID) && (!strings.Contains(line, "\x1b[31mfailed (127)\x1b[0m") || !strings.HasSuffix(plain, "…")) {
			t.Errorf("row %q: want a red `failed (127)` and the command cut with …", line)
		}
		if strings.Contains(plain, "NAME") || strings.Contains(plain, "OUTPUT") {
			t.Errorf("header %q: no NAME without names, no OUTPUT without --wide", plain)
		}
	}
	if out := h.qtaskOnTTY(60, []string{"NO_COLOR=1"}, "ls"); strings.Contains(out, "\x1b") {
		t.Errorf("ls with NO_COLOR printed escapes: %q", out)
	}
	piped := h.mustQtask("ls")
	if strings.Contains(piped, "\x1b") || !strings.Contains(piped, long) {
		t.Errorf("ls into a pipe must print the whole command and no colours:\n%s", piped)
	}
	named := h.start("sleep 60", "--name", "web")
	wide := h.mustQtask("ls", "-o", "wide")
	if !strings.Contains(wide, "NAME") || !strings.Contains(wide, "OUTPUT") || !strings.Contains(wide, failed.OutputPath) {
		t.Errorf("ls -o wide:\n%s", wide)
	}
	if ids := h.mustQtask("ls", "-q"); ids != failed.ID+"\n"+named.ID+"\n" {
		t.Errorf("ls -q = %q", ids)
	}
	h.mustQtask("stop", named.ID)
}

// A missing or extra argument is one line saying what and where to look,
// exit 2; help shows no internal placeholder values.
func TestUsageErrorsSayWhereToLook(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	cases := map[string][]string{
		"qtask: missing task ID (see 'qtask status --help')\n":     {"status"},
		"qtask: missing COMMAND (see 'qtask run --help')\n":        {"run", "--bg"},
		"qtask: too many arguments: b (see 'qtask logs --help')\n": {"logs", "a", "b"},
		"qtask: unknown flag: --bogus (see 'qtask ls --help')\n":   {"ls", "--bogus"},
	}
	for want, args := range cases {
		if r := h.qtask(args...); r.code != exitUsage || r.stderr != want {
			t.Errorf("qtask %s: exit %d, stderr %q; want %d, %q", strings.Join(args, " "), r.code, r.stderr, exitUsage, want)
		}
	}
	if help := h.mustQtask("logs", "--help"); strings.Contains(help, "-1") {
		t.Errorf("logs --help shows an internal placeholder:\n%s", help)
	}
}

// rm removes finished tasks with their files and refuses a running one
// (nothing removed) unless --force; restart starts a finished task's
// command again with its name and directory, under a new id.
func TestRmAndRestart(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(h.root, "work dir")
	os.Mkdir(dir, 0o700)
	done := h.wait(h.start("pwd; exit 3", "--name", "job", "--cwd", dir).ID)
	running := h.start("sleep 60")
	if r := h.qtask("rm", done.ID, running.ID); r.code != 1 || !strings.Contains(r.stderr, "task "+running.ID+" is still running: stop it first") {
		t.Fatalf("rm with a running task: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Stat(done.OutputPath); err != nil {
		t.Fatalf("a refused rm removed the finished task too: %v", err)
	}

	out := h.mustQtask("restart", done.ID[:4])
	again := h.lastTask()
	if again.ID == done.ID || !strings.Contains(out, "Started task "+again.ID) ||
		again.Command != done.Command || again.Name != "job" || again.Cwd != dir {
		t.Fatalf("restart printed %q and started %+v; want a new task running %q named job in %q", out, again, done.Command, dir)
	}
	if r := h.qtask("restart", running.ID); r.code != 1 || !strings.Contains(r.stderr, "still running") {
		t.Errorf("restart of a running task: exit %d, %q", r.code, r.stderr)
	}
	// Its directory removed since: not a usage error (restart has no
	// --cwd to fix it with), one line saying what is gone and what to do.
	gone := filepath.Join(h.root, "gone")
	os.Mkdir(gone, 0o700)
	ran := h.wait(h.start("true", "--cwd", gone).ID)
	os.Remove(gone)
	if r := h.qtask("restart", ran.ID); r.code != exitError || strings.Contains(r.stderr, "--cwd (see") ||
		!strings.Contains(r.stderr, "no longer a directory") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("restart of a task whose directory is gone: exit %d, %q; want exit 1, one line saying so", r.code, r.stderr)
	}

	if out := h.mustQtask("rm", done.ID); out != "Removed task "+done.ID+"\n" {
		t.Errorf("rm printed %q", out)
	}
	if _, err := os.Stat(done.OutputPath); err == nil {
		t.Errorf("rm left the output file %s", done.OutputPath)
	}
	if r := h.qtask("status", done.ID); r.code != 1 || !strings.Contains(r.stderr, "no task with id") {
		t.Errorf("status after rm: exit %d, %q", r.code, r.stderr)
	}
	if out := h.mustQtask("rm", "--force", running.ID); out != "Removed task "+running.ID+"\n" {
		t.Errorf("rm --force of a running task printed %q", out)
	}
	h.wait(again.ID)
}

// qtask man writes a page per command from the commands' own help.
func TestManPages(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	dir := filepath.Join(h.root, "man", "man1")
	h.mustQtask("man", dir)
	for _, page := range []string{"qtask.1", "qtask-run.1", "qtask-status.1", "qtask-doctor.1"} {
		data, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !strings.Contains(string(data), `.TH "QTASK" "1"`) {
			t.Errorf("man page %s: %v %.80q", page, err, data)
		}
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "qtask-status.1")); !strings.Contains(string(data), "qtask-status - Show one task in full") {
		t.Errorf("qtask-status.1 lacks the command's description")
	}
	if _, err := os.Stat(filepath.Join(dir, "qtask-_exec.1")); err == nil {
		t.Errorf("a hidden internal command got a man page")
	}
}

// status of an ended task shows its last lines (why it failed is usually
// there) and no pane, which is gone or another task's by now.
func TestStatusOfEndedTaskShowsItsLastLines(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start(`seq 1 20; echo "error: it broke" >&2; exit 2`)
	h.qtask("wait", "--timeout", "60s", task.ID)
	out := h.mustQtask("status", task.ID)
	want := "\n--- last 10 lines of output ---\n12\n13\n14\n15\n16\n17\n18\n19\n20\nerror: it broke\n"
	if !strings.HasSuffix(out, want) || strings.Contains(out, "pane:") {
		t.Errorf("status of a failed task:\n%s\nwant it to end with%s and show no pane", out, want)
	}
}

// attach inside tmux says how to get back.
func TestAttachSaysHowToGetBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("user")
	h.ptyClient("user")
	task := h.start("sleep 60")
	r := h.qtaskIn(h.root, h.insideEnv(pane), "attach", task.ID)
	if r.code != 0 || r.stderr != "qtask: showing task "+task.ID+"; prefix L goes back to the session you were in\n" {
		t.Errorf("attach inside tmux: exit %d, stderr %q", r.code, r.stderr)
	}
	h.mustQtask("stop", task.ID)
}

// run --bg's hints name qtask as the user typed it, so they work when
// pasted before qtask is on PATH (the quick start's bin/qtask).
func TestHintsUseTheTypedName(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	os.Mkdir(filepath.Join(h.root, "bin"), 0o700)
	if err := os.Symlink(qtaskBin, filepath.Join(h.root, "bin", "qtask")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bin/qtask", "run", "--bg", "--", "true")
	cmd.Dir, cmd.Env = h.root, h.env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bin/qtask run --bg: %v", err)
	}
	if !strings.Contains(string(out), "Follow:  bin/qtask logs -f ") || !strings.Contains(string(out), "Stop:    bin/qtask stop ") {
		t.Errorf("hints of bin/qtask run --bg:\n%s", out)
	}
	if out := h.mustQtask("run", "--bg", "--", "true"); !strings.Contains(out, "Follow:  "+qtaskBin+" logs -f ") {
		t.Errorf("hints of qtask run by its full path:\n%s", out)
	}
}
