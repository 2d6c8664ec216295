package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// shellCase is how to start one shell bare (no user rc files), load the
// hooks, and write a loop in its syntax: n lines, one every 0.1 s until the
// file gate exists, then the rest at once, and exit.
type shellCase struct {
	name  string
	start []string
	init  string
	loop  func(n int, gate string, exit int) string
}

var interactiveShells = []shellCase{
	{"bash", []string{"bash", "--norc", "--noprofile", "-i"}, `eval "$(qtask init bash)"`,
		func(n int, gate string, exit int) string {
			return fmt.Sprintf("for i in $(seq 1 %d); do echo line $i; [ -e %s ] || sleep 0.1; done; (exit %d)", n, gate, exit)
		}},
	{"zsh", []string{"zsh", "-f", "-i"}, `eval "$(qtask init zsh)"`,
		func(n int, gate string, exit int) string {
			return fmt.Sprintf("for i in $(seq 1 %d); do echo line $i; [ -e %s ] || sleep 0.1; done; (exit %d)", n, gate, exit)
		}},
	{"fish", []string{"fish", "--no-config", "-i"}, `qtask init fish | source`,
		func(n int, gate string, exit int) string {
			return fmt.Sprintf("for i in (seq 1 %d); echo line $i; test -e %s; or sleep 0.1; end; sh -c 'exit %d'", n, gate, exit)
		}},
}

// shellPane starts sh in a new session of the harness's server with the
// hooks loaded, and returns its pane id.
func (h *harness) shellPane(sh shellCase) string {
	h.t.Helper()
	testenv.NeedProgram(h.t, sh.start[0])
	args := append([]string{"new-session", "-d", "-s", sh.name, "-x", "120", "-y", "40", "-c", h.root, "--"}, sh.start...)
	if _, err := h.tmux(args...); err != nil {
		h.t.Fatal(err)
	}
	pane, _ := h.tmux("display-message", "-p", "-t", "="+sh.name+":", "#{pane_id}")
	h.typeLine(pane, sh.init+"; echo hooks-ready")
	eventually(h.t, sh.name+" hooks to load", func() bool {
		screen, _ := h.tmux("capture-pane", "-p", "-t", pane)
		return strings.Contains(screen, "\nhooks-ready")
	})
	return pane
}

// typeLine types line and Enter into the shell in pane, once its line
// editor reads the keys.
func (h *harness) typeLine(pane, line string) {
	h.t.Helper()
	h.awaitLineEditor(pane)
	if _, err := h.tmux("send-keys", "-t", pane, "-l", line); err != nil {
		h.t.Fatal(err)
	}
	h.tmux("send-keys", "-t", pane, "Enter")
}

// awaitLineEditor waits until the shell in pane edits a line: its
// terminal out of canonical mode, as readline, zle and fish's reader leave
// it while they read keys (they put it back to run the line). Keys typed
// before that, while the shell still runs its last line or its prompt
// hook, are echoed by the terminal wherever the cursor is, and the line
// editor then draws them again: the screen holds the command line twice,
// garbled when its Enter came after the editor started (seen in CI:
// TestPromotedProgressBarRedrawsInPlace's progress bar was redrawn over
// the command line, which the promote took for output).
func (h *harness) awaitLineEditor(pane string) {
	h.t.Helper()
	tty, err := h.tmux("display-message", "-p", "-t", pane, "#{pane_tty}")
	if err != nil || tty == "" {
		h.t.Fatalf("the terminal of pane %s: %q %v", pane, tty, err)
	}
	eventually(h.t, "the shell in "+pane+" to read a line", func() bool {
		f, err := os.OpenFile(tty, os.O_RDONLY|syscall.O_NOCTTY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		defer f.Close()
		termios, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		return err == nil && termios.Lflag&unix.ICANON == 0
	})
}

// geometry is where a pane sits in its window.
func (h *harness) geometry(pane string) string {
	g, err := h.tmux("display-message", "-p", "-t", pane, "#{window_id} #{pane_index} #{pane_left},#{pane_top} #{pane_width}x#{pane_height}")
	if err != nil {
		h.t.Fatalf("pane %s: %v", pane, err)
	}
	return g
}

func TestInteractivePromote(t *testing.T) {
	t.Parallel()
	for _, sh := range interactiveShells {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel() // each shell has its own server and state
			h := newHarness(t)
			pane := h.shellPane(sh)
			// A second pane, so the layout is not trivial.
			h.tmux("split-window", "-d", "-h", "-t", pane)
			before := h.geometry(pane)
			layoutBefore, _ := h.tmux("display-message", "-p", "-t", pane, "#{window_visible_layout}")
			const n = 40
			// The loop prints on while the promote runs, and the rest at
			// once when the promote is checked (the gate): 4 s otherwise.
			gate := filepath.Join(h.root, "gate")
			loop := sh.loop(n, gate, 3)
			h.typeLine(pane, loop)
			eventually(t, "the loop to print line 5", func() bool {
				screen, _ := h.tmux("capture-pane", "-p", "-t", pane)
				return strings.Contains(screen, "line 5\n")
			})
			promotedAt := time.Now()
			out := h.mustQtask("promote", "--pane", pane)
			if !strings.HasPrefix(out, "Promoted task ") {
				t.Fatalf("promote said %q", out)
			}
			task := h.lastTask()
			if task.Command != loop || !task.Background || !task.Running() {
				t.Fatalf("adopted task: command %q background %v status %s", task.Command, task.Background, task.Status)
			}
			if !task.StartedAt.Before(promotedAt.Add(-300 * time.Millisecond)) {
				t.Fatalf("start time %v should be when the command was typed, not the promote (%v)", task.StartedAt, promotedAt)
			}
			// A fresh shell now sits exactly where the command was.
			fresh, _ := h.tmux("display-message", "-p", "-t", strings.Fields(before)[0]+"."+strings.Fields(before)[1], "#{pane_id}")
			if fresh == pane {
				t.Fatalf("the promoted pane is still in the user's window")
			}
			if after := h.geometry(fresh); after != before {
				t.Fatalf("the user's window changed: pane was %q, replacement is %q", before, after)
			}
			if layoutAfter, _ := h.tmux("display-message", "-p", "-t", fresh, "#{window_visible_layout}"); stripPaneNumbers(layoutAfter) != stripPaneNumbers(layoutBefore) {
				t.Fatalf("layout changed: %s → %s", layoutBefore, layoutAfter)
			}
			if where, _ := h.tmux("display-message", "-p", "-t", pane, "#{session_name}"); where != "qtask" {
				t.Fatalf("the promoted pane is in session %q, want qtask", where)
			}
			if err := os.WriteFile(gate, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			end := h.wait(task.ID)
			if end.Status != tasks.StatusFailed || end.ExitCode == nil || *end.ExitCode != 3 {
				t.Fatalf("adopted task ended %s exit %v, want failed with exit 3", end.Status, deref(end.ExitCode))
			}
			var want strings.Builder
			for i := 1; i <= n; i++ {
				fmt.Fprintf(&want, "line %d\n", i)
			}
			if got := h.output(task.ID); got != want.String() {
				t.Fatalf("output of the adopted command:\n%q\nwant lines 1..%d exactly once, in order", got, n)
			}
			eventually(t, "the promoted pane to close", func() bool {
				panes, _ := h.tmux("list-panes", "-a", "-F", "#{pane_id}")
				return !strings.Contains(panes+"\n", pane+"\n")
			})
		})
	}
}

// After a promote the pane gets the shell the command was typed in (its
// program and arguments), in that shell's directory: it got the server's
// default-shell, which need not be the shell of the pane (one started as
// `tmux new-window zsh`, or after `exec fish`), in the directory of the
// command's process (pane_current_path), which may have moved elsewhere.
func TestInteractivePromoteKeepsTheShell(t *testing.T) {
	t.Parallel()
	for _, sh := range interactiveShells {
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			pane := h.shellPane(sh)
			// A default-shell unlike every shell tested: the pane's own is
			// not what tmux would start.
			if _, err := h.tmux("set-option", "-g", "default-shell", "/bin/sh"); err != nil {
				t.Fatal(err)
			}
			shellPID, _ := h.tmux("display-message", "-p", "-t", pane, "#{pane_pid}")
			wantExe := procExe(t, shellPID)
			os.Mkdir(filepath.Join(h.root, "elsewhere"), 0o700)
			place := h.geometry(pane)
			// The command moves to a directory of its own: the pane's current
			// path follows it, the shell stays where it was typed.
			// (The output, moved-42, is not in the typed line: the promote
			// waits for the command to run, not for the line to be echoed.)
			h.typeLine(pane, "sh -c 'cd elsewhere && echo moved-$((6*7)) && exec sleep 60'")
			task := h.promoteOnceShown(pane, "moved-42")
			fresh, _ := h.tmux("display-message", "-p", "-t", strings.Fields(place)[0]+"."+strings.Fields(place)[1], "#{pane_id}")
			if fresh == pane {
				t.Fatalf("the promoted pane is still in the user's window")
			}
			freshPID, _ := h.tmux("display-message", "-p", "-t", fresh, "#{pane_pid}")
			serverPID, _ := h.tmux("display-message", "-p", "#{pid}")
			// Its exe changes a moment before its exec has put its
			// arguments in place: until then its cmdline reads empty.
			eventually(t, "the new pane's process to leave tmux for its program", func() bool {
				if procExe(t, freshPID) == procExe(t, serverPID) {
					return false
				}
				cmdline, err := os.ReadFile("/proc/" + freshPID + "/cmdline")
				return err == nil && len(cmdline) > 0
			})
			if got := procExe(t, freshPID); got != wantExe {
				t.Errorf("the pane's new shell runs %s, want %s, the shell the command was typed in", got, wantExe)
			}
			// Interactive, without the arguments the old one was started
			// with (here --norc and the like; a start-up command must not
			// run twice).
			if got := procArgs(t, freshPID); got != "-i" {
				t.Errorf("the pane's new shell has arguments %q, want -i", got)
			}
			root, _ := filepath.EvalSymlinks(h.root)
			if got, _ := os.Readlink("/proc/" + freshPID + "/cwd"); got != root {
				t.Errorf("the pane's new shell starts in %s, want %s, the directory of the shell the command was typed in", got, root)
			}
			h.mustQtask("stop", task.ID)
		})
	}
}

// procExe is the program process pid runs.
func procExe(t *testing.T, pid string) string {
	t.Helper()
	exe, err := os.Readlink("/proc/" + pid + "/exe")
	if err != nil {
		t.Fatalf("process %s: %v", pid, err)
	}
	return exe
}

// procArgs is process pid's arguments after the program name.
func procArgs(t *testing.T, pid string) string {
	t.Helper()
	cmdline, err := os.ReadFile("/proc/" + pid + "/cmdline")
	if err != nil {
		t.Fatalf("process %s: %v", pid, err)
	}
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	return strings.Join(args[1:], " ")
}

// stripPaneNumbers drops the pane ids from a tmux layout string
// ("b25f,120x40,0,0{60x40,0,0,1,59x40,61,0,2}"), leaving only geometry.
func stripPaneNumbers(layout string) string {
	_, body, _ := strings.Cut(layout, ",")
	var b strings.Builder
	for _, cell := range strings.FieldsFunc(body, func(r rune) bool { return r == '{' || r == '}' || r == '[' || r == ']' }) {
		parts := strings.Split(strings.Trim(cell, ","), ",")
		for i, p := range parts {
			if i%4 == 3 && !strings.Contains(p, "x") {
				continue
			}
			b.WriteString(p + ",")
		}
		b.WriteString("|")
	}
	return b.String()
}

func TestInteractivePromoteIdleAndStop(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellPane(interactiveShells[0])
	if r := h.qtask("promote", "--pane", pane); r.code != 1 || !strings.Contains(r.stderr, "nothing running in pane "+pane) {
		t.Fatalf("promote at an idle prompt: exit %d %q", r.code, r.stderr)
	}
	h.typeLine(pane, "while true; do sleep 0.2; done")
	eventually(t, "the hook to record the command", func() bool {
		return h.qtask("promote", "--pane", pane).code == 0
	})
	task := h.lastTask()
	out := h.mustQtask("stop", "--grace", "1s", task.ID)
	if !strings.Contains(out, "cancelled") {
		t.Fatalf("stop of an adopted loop: %q", out)
	}
	if st := h.status(task.ID); st.Status != tasks.StatusCancelled {
		t.Fatalf("adopted task after stop: %s", st.Status)
	}
}

// Between two jobs of a promoted command line (a loop's test, a builtin
// read) no job is in the terminal's foreground: the shell runs the line
// itself. A stop then interrupts the shell, as Ctrl+C would; it never takes
// the end of the job that was in the foreground at the promote for the end
// of the line (it once said "already ended: lost" and left the loop running).
func TestInteractiveStopWhileTheShellRunsTheLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellPane(interactiveShells[0])
	gate := filepath.Join(h.root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	h.typeLine(pane, "cat "+gate+"; echo looping; while true; do read -t 0.3; done")
	eventually(t, "the hook to record the command", func() bool {
		return h.qtask("promote", "--pane", pane).code == 0
	})
	task := h.lastTask()
	// cat, the job in the foreground at the promote, ends; from here on
	// only the shell runs the line.
	f, err := os.OpenFile(gate, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	eventually(t, "the loop to run", func() bool { return strings.Contains(h.output(task.ID), "looping") })
	r := h.qtask("stop", "--grace", "1s", task.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "cancelled") {
		t.Fatalf("stop of a loop the shell runs itself: exit %d, stdout %q, stderr %q; want cancelled", r.code, r.stdout, r.stderr)
	}
	if st := h.status(task.ID); st.Status != tasks.StatusCancelled {
		t.Fatalf("adopted task after stop: %s", st.StatusText())
	}
}

func TestHooksAreSilentAndHarmless(t *testing.T) {
	t.Parallel()
	for _, sh := range interactiveShells {
		t.Run(sh.name, func(t *testing.T) {
			h := newHarness(t)
			pane := h.shellPane(sh)
			h.typeLine(pane, "echo probe-one")
			// Even with the state dir gone (removed: a read-only dir would not
			// stop root), prompts work and print nothing extra.
			h.typeLine(pane, "rm -rf "+h.state+"/panes; echo probe-two")
			h.typeLine(pane, "echo probe-three")
			eventually(t, "the prompts to come back", func() bool {
				screen, _ := h.tmux("capture-pane", "-p", "-t", pane)
				return strings.Contains(screen, "\nprobe-three")
			})
			screen, _ := h.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", pane)
			for _, bad := range []string{"qtask:", "__qtask", "rror", "denied", "o such", "warning"} {
				lines := strings.Split(screen, "\n")
				for _, l := range lines {
					if strings.Contains(l, bad) && !strings.Contains(l, "init") && !strings.Contains(l, "rm -rf") {
						t.Fatalf("the hooks printed %q:\n%s", l, screen)
					}
				}
			}
		})
	}
}

func TestInteractivePromoteKeepsPaneWhenConfigured(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.writeConfig("keep_promoted_pane = true\n")
	pane := h.shellPane(interactiveShells[0])
	// The command waits on a FIFO, not a clock, so the promote always
	// finds it running, however slow the machine.
	gate := filepath.Join(h.root, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	h.typeLine(pane, "cat "+gate+" >/dev/null; echo kept")
	eventually(t, "the hook to record the command", func() bool {
		return h.qtask("promote", "--pane", pane).code == 0
	})
	if err := os.WriteFile(gate, []byte("go\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	task := h.wait(h.lastTask().ID)
	if task.Status != tasks.StatusCompleted || h.output(task.ID) != "kept\n" {
		t.Fatalf("adopted task: %s, output %q", task.Status, h.output(task.ID))
	}
	if panes, _ := h.tmux("list-panes", "-a", "-F", "#{pane_id}"); !strings.Contains(panes+"\n", pane+"\n") {
		t.Fatalf("with keep_promoted_pane = true the pane %s should stay open; panes: %s", pane, panes)
	}
}

// A command promoted while it redraws a line (a progress bar) goes on
// redrawing that line in the output file, as it does in the pane: the
// capture starts from the pane's screen, not below it.
func TestPromotedProgressBarRedrawsInPlace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellPane(interactiveShells[0])
	gate := filepath.Join(h.root, "gate")
	h.typeLine(pane, "printf 'step 1 of 3'; until [ -e "+gate+" ]; do sleep 0.05; done; printf '\\rstep 3 of 3\\ndone\\n'")
	task := h.promoteOnceShown(pane, "\nstep 1 of 3")
	os.WriteFile(gate, nil, 0o600)
	h.wait(task.ID)
	if got := h.output(task.ID); got != "step 3 of 3\ndone\n" {
		t.Fatalf("output of the promoted progress bar:\n%q\nwant the bar's last frame once, then done", got)
	}
}

// promoteOnceShown promotes the command running in pane once the pane
// shows text, and returns the task it became.
func (h *harness) promoteOnceShown(pane, text string) tasks.Task {
	h.t.Helper()
	eventually(h.t, fmt.Sprintf("the pane to show %q", text), func() bool {
		screen, _ := h.tmux("capture-pane", "-p", "-t", pane)
		return strings.Contains(screen, text)
	})
	if out := h.mustQtask("promote", "--pane", pane); !strings.HasPrefix(out, "Promoted task ") {
		h.t.Fatalf("promote said %q", out)
	}
	return h.lastTask()
}
