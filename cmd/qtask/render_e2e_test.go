package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/render"
)

// TestSlowRedrawsGiveOneLine: a progress bar redrawn with CR more than a
// second apart (pv's and curl's meters, slow tqdm) leaves one line in the
// output, its last frame, not one line per frame.
func TestSlowRedrawsGiveOneLine(t *testing.T) {
	testenv.SkipShort(t, "redraws a line 1.3 s apart")
	t.Parallel()
	h := newHarness(t)
	task := h.start(`printf ' 1/3'; sleep 1.3; printf '\r 2/3'; sleep 1.3; printf '\r 3/3 done\n'`)
	h.wait(task.ID)
	if got := h.output(task.ID); got != " 3/3 done\n" {
		t.Fatalf("output of a bar redrawn every 1.3 s:\n%q\nwant its last frame only", got)
	}
}

// TestPartialLineReplacedNotDuplicated: a partial line (a prompt, a
// spinner) shows in `qtask logs` soon after it is printed, and when the
// program redraws it, the file holds the new text in its place: `logs`
// and `logs -f` never show the old one.
func TestPartialLineReplacedNotDuplicated(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	printed := filepath.Join(h.root, "printed")
	gate := filepath.Join(h.root, "gate")
	task := h.start("printf 'working...'; : >'" + printed + "'; while [ ! -e '" + gate + "' ]; do sleep 0.02; done; printf '\\r\\033[Kdone\\n'")
	eventually(t, "the task to print its partial line", func() bool { _, err := os.Stat(printed); return err == nil })
	seen := time.Now()
	eventually(t, "the partial line in logs", func() bool { return h.output(task.ID) == "working...\n" })
	if d := time.Since(seen); d > time.Second {
		t.Errorf("the partial line took %v to reach the output file", d)
	}
	follow := make(chan result, 1)
	go func() { follow <- h.qtask("logs", "-f", task.ID) }()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.wait(task.ID)
	if got := h.output(task.ID); got != "done\n" {
		t.Errorf("logs after the redraw: %q, want %q", got, "done\n")
	}
	if r := <-follow; r.stdout != "done\n" {
		t.Errorf("logs -f printed %q, want %q", r.stdout, "done\n")
	}
}

// TestFollowShowsPartialLineOnTerminal: `logs -f` on a terminal shows a
// partial line within a second of its printing, and when the program
// redraws it, replaces it in place: what a person sees at the end is the
// final line once, not the old frame beside or above it.
func TestFollowShowsPartialLineOnTerminal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	start := filepath.Join(h.root, "start")
	printed := filepath.Join(h.root, "printed")
	gate := filepath.Join(h.root, "gate")
	await := func(f string) string { return "while [ ! -e '" + f + "' ]; do sleep 0.02; done; " }
	task := h.start(await(start) + "printf 'progress 1'; : >'" + printed + "'; " + await(gate) + "printf '\\rprogress 2\\n'")

	master, tty := openPTY(t, 24, 80)
	defer master.Close()
	follow := exec.Command(qtaskBin, "logs", "-f", task.ID)
	follow.Env, follow.Dir = h.env, h.root
	follow.Stdout, follow.Stderr = tty, tty
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { follow.Process.Kill() })
	tty.Close()
	seen := &syncBuffer{}
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(seen, master) // ends with EIO once logs -f has exited
	}()

	if err := os.WriteFile(start, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the task to print its partial line", func() bool { _, err := os.Stat(printed); return err == nil })
	at := time.Now()
	eventually(t, "the partial line on logs -f's terminal", func() bool { return strings.Contains(seen.String(), "progress 1") })
	if d := time.Since(at); d > time.Second {
		t.Errorf("the partial line took %v to show in logs -f, want at most 1 s", d)
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := follow.Wait(); err != nil {
		t.Fatalf("logs -f: %v; printed %q", err, seen.String())
	}
	select {
	case <-read:
	case <-time.After(20 * time.Second):
		t.Fatal("the pty did not close after logs -f exited")
	}
	var screen bytes.Buffer
	s := render.New(&screen, render.Options{Width: 80, Height: 24})
	s.Write([]byte(seen.String()))
	s.Close()
	if screen.String() != "progress 2\n" {
		t.Errorf("logs -f's terminal shows\n%q\nwant the final line once; it was sent %q (output file %q, status %+v)", screen.String(), seen.String(), h.output(task.ID), h.status(task.ID))
	}
}

// TestFollowTailPrintsARedrawnLineOnce: `logs --tail N -f`, started while
// a partial line is on the screen, prints what that line ends as, once:
// not the frame it showed when the tail was read, beside its replacement
// or instead of it.
func TestFollowTailPrintsARedrawnLineOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	task := h.start("echo done before; printf 'progress 1'; while [ ! -e '" + gate + "' ]; do sleep 0.02; done; printf '\\rprogress 2\\n'")
	eventually(t, "the partial line in logs", func() bool { return h.output(task.ID) == "done before\nprogress 1\n" })
	follow := h.spawn(nil, "logs", "--tail", "5", "-f", task.ID)
	eventually(t, "logs --tail 5 -f to print the lines before", func() bool { return follow.stdout.String() != "" })
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := follow.wait(t); code != 0 {
		t.Fatalf("logs --tail 5 -f exited %d: %s", code, follow.stderr.String())
	}
	if got := follow.stdout.String(); got != "done before\nprogress 2\n" {
		t.Errorf("logs --tail 5 -f printed %q, want %q", got, "done before\nprogress 2\n")
	}
}

// TestOracleThroughPane replays each recorded stream of the renderer's
// oracle suite (tasks/render/testdata/oracle, whose tmux renderings the
// renderer matches) through a real task's pane: the output file must hold
// exactly the renderer's text for those bytes.
func TestOracleThroughPane(t *testing.T) {
	t.Parallel()
	raws, err := filepath.Glob("../../tasks/render/testdata/oracle/*.raw")
	if err != nil || len(raws) < 20 {
		t.Fatalf("oracle corpus missing: %d files, %v", len(raws), err)
	}
	h := newHarness(t)
	// Every stream's task is started first, each in its own pane, and
	// they run side by side: one after another took 22 round trips.
	ids := make([]string, len(raws))
	for i, raw := range raws {
		abs, _ := filepath.Abs(raw)
		// stty -opost: the pty passes the recorded bytes on unchanged.
		ids[i] = h.start("stty -opost; cat '" + abs + "'").ID
	}
	for i, raw := range raws {
		name := strings.TrimSuffix(filepath.Base(raw), ".raw")
		in, err := os.ReadFile(raw)
		if err != nil {
			t.Fatal(err)
		}
		task := h.wait(ids[i])
		var want bytes.Buffer
		s := render.New(&want, render.Options{Width: 80, Height: 24, Program: "stty"})
		s.Write(in)
		s.Close()
		if got := h.output(task.ID); got != want.String() {
			t.Errorf("%s: the output file differs from the rendering of the same bytes\n--- file\n%s\n--- rendering\n%s", name, got, want.String())
		}
	}
}

// TestResizedPaneWrapsAtNewWidth: a task whose window is resized while it
// runs draws what it prints afterwards at the new width, as tmux does: a
// long line redrawn from its last row with CR ends as tmux shows it, and
// the output file matches tmux's own capture of the same pane.
func TestResizedPaneWrapsAtNewWidth(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	gate := filepath.Join(h.root, "gate")
	done := filepath.Join(h.root, "done")
	await := func(f string) string { return "while [ ! -e '" + f + "' ]; do sleep 0.02; done; " }
	line := func(c string) string {
		return "printf '" + strings.Repeat(c, 100) + "\\r" + strings.ToUpper(c+c) + "\\n'; "
	}
	// The task prints once its terminal has the new size, as a program
	// that redraws on SIGWINCH does: tmux resizes its own screen first and
	// tells the pane's terminal a moment later.
	task := h.start(line("a") + await(gate) + `until [ "$(stty size)" = "20 50" ]; do sleep 0.02; done; ` + line("b") + await(done))
	eventually(t, "the first line in the output", func() bool { return strings.Contains(h.output(task.ID), "AA") })
	if _, err := h.tmux("resize-window", "-t", task.PaneID, "-x", "50", "-y", "20"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pane to be 50 columns wide", func() bool {
		w, _ := h.tmux("display-message", "-p", "-t", task.PaneID, "#{pane_width}")
		return w == "50"
	})
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second line in the output", func() bool { return strings.Contains(h.output(task.ID), "BB") })
	shown, err := h.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", task.PaneID)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Repeat("a", 80) + "AA" + strings.Repeat("a", 18) + "\n" + strings.Repeat("b", 50) + "BB" + strings.Repeat("b", 48) + "\n"
	if got := trimBlanks(shown); got != want {
		t.Fatalf("tmux shows\n%s\nwant\n%s", got, want)
	}
	if got := h.output(task.ID); got != want {
		t.Errorf("output file while the task runs:\n%s\ntmux shows:\n%s", got, want)
	}
	if err := os.WriteFile(done, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.wait(task.ID)
	if got := h.output(task.ID); got != want {
		t.Errorf("output file at the end:\n%s\ntmux showed:\n%s", got, want)
	}
}

// trimBlanks drops trailing blanks from each line and trailing empty
// lines, as capture-pane pads them.
func trimBlanks(s string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestInsertAfterTabKeepsCapturing: characters inserted before a tab (ICH)
// move it past the column it stopped at; the capture once looped for ever
// writing such a row out, and the task never settled.
func TestInsertAfterTabKeepsCapturing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start(`printf '\tx\r\033[10@\r\nafter\r\n'`)
	if end := h.wait(task.ID); end.Status != tasks.StatusCompleted {
		t.Fatalf("task ended %s: %s", end.Status, end.Error)
	}
	if got, want := h.output(task.ID), strings.Repeat(" ", 18)+"x\nafter\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

// TestAdoptedPaneDrawsAtItsSize: the capture of a command promoted from an
// interactive shell draws at the pane's real size, not 80×24, and follows
// the pane when it is resized.
func TestAdoptedPaneDrawsAtItsSize(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellPane(interactiveShells[0])
	gate := filepath.Join(h.root, "gate")
	h.typeLine(pane, "echo started; while [ ! -e '"+gate+"' ]; do sleep 0.05; done; until [ \"$(stty size)\" = '30 70' ]; do sleep 0.02; done; printf '"+strings.Repeat("b", 150)+"\\rYY\\n'")
	task := h.promoteOnceShown(pane, "\nstarted")
	if _, err := h.tmux("resize-window", "-t", pane, "-x", "70", "-y", "30"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the pane to be 70 columns wide", func() bool {
		w, _ := h.tmux("display-message", "-p", "-t", pane, "#{pane_width}")
		return w == "70"
	})
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.wait(task.ID)
	// 150 columns at 70: the CR goes back to the third row, column 140.
	want := strings.Repeat("b", 140) + "YY" + strings.Repeat("b", 8) + "\n"
	if got := h.output(task.ID); !strings.HasSuffix(got, "\n"+want) {
		t.Errorf("output of the adopted command:\n%s\nwant it to end with\n%s", got, want)
	}
}

// TestKeepFullScreen: with keep_full_screen = true, a full-screen
// program's last screen is in the output after the note that stands for
// its output; by default only the note is.
func TestKeepFullScreen(t *testing.T) {
	t.Parallel()
	const command = `printf 'before\n\033[?1049h\033[Hframe one\r\n  frame two\033[?1049lafter\n'`
	note := "[qtask: full-screen program output not kept (printf, 1 KB)]\n"
	for _, tc := range []struct {
		config, want string
	}{
		{"", "before\n" + note + "after\n"},
		{"keep_full_screen = true\n", "before\n" + note + "frame one\n  frame two\nafter\n"},
	} {
		h := newHarness(t)
		h.writeConfig(tc.config)
		task := h.start(command)
		h.wait(task.ID)
		if got := h.output(task.ID); got != tc.want {
			t.Errorf("config %q: output\n%q\nwant\n%q", tc.config, got, tc.want)
		}
	}
}
