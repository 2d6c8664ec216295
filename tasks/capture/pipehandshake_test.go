package capture

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// paneShell starts what tmux starts for a pane's pipe: /bin/sh -c command,
// the pipe (a socket) on its stdin. It returns tmux's end of the socket.
func paneShell(t *testing.T, command string) (*exec.Cmd, *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	tmuxEnd, shellEnd := os.NewFile(uintptr(fds[0]), "tmux end"), os.NewFile(uintptr(fds[1]), "shell end")
	sh := exec.Command("/bin/sh", "-c", command)
	sh.Stdin = shellEnd
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	shellEnd.Close()
	t.Cleanup(func() {
		tmuxEnd.Close()
		sh.Process.Kill()
		sh.Wait()
	})
	return sh, tmuxEnd
}

// TestMain lets this test binary serve as the handover helper: the pipe's
// shell runs /proc/PID/exe, which here is the test binary.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == HandoverVerb {
		if err := Handover(os.Args[2], os.Stdin); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func newTestCapture(mode Mode) *Pane {
	return &Pane{mode: mode, alive: procRuns, stop: make(chan struct{}), done: make(chan struct{})}
}

// procRuns is what the store tells a capture of a process (PaneOptions.Alive):
// there, and neither stopped nor a zombie, by its state in /proc/PID/stat.
func procRuns(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(stat, ')')
	if err != nil || i < 0 || i+2 >= len(stat) {
		return false
	}
	state := stat[i+2]
	return state != 'T' && state != 't' && state != 'Z'
}

// connectPaneShell runs a handshake's shell as tmux would and connects a
// capture of mode to it: the capture, the shell, tmux's end of the pane's
// pipe and what the capture reads.
func connectPaneShell(t *testing.T, mode Mode) (*Pane, *exec.Cmd, *os.File, *os.File) {
	t.Helper()
	c := newTestCapture(mode)
	h, err := newPipeHandshake()
	if err != nil {
		t.Fatal(err)
	}
	sh, tmuxEnd := paneShell(t, h.command())
	in, err := c.connect(h)
	if err != nil || in == nil {
		t.Fatalf("connect: %v, %v", in, err)
	}
	t.Cleanup(func() { in.Close() })
	return c, sh, tmuxEnd, in
}

// endsWithin waits up to d for cmd to end.
func endsWithin(cmd *exec.Cmd, d time.Duration) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// expectRead reads want from f, failing after a few seconds.
func expectRead(t *testing.T, f *os.File, want string) {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, len(want))
		n, _ := io.ReadFull(f, buf)
		got <- string(buf[:n])
	}()
	select {
	case s := <-got:
		if s != want {
			t.Fatalf("read %q, want %q", s, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("%q never arrived", want)
	}
}

// The wrapper takes the pane's pipe from the shell: what tmux writes
// reaches it with no process between, and the shell exits at once, though
// the pipe is still open (a cat would run until it closed).
func TestHandshakeTakesThePanesPipe(t *testing.T) {
	c, sh, tmuxEnd, in := connectPaneShell(t, captureTake)
	if c.source.sock != in || c.source.pid != 0 {
		t.Errorf("source %+v, want the pipe itself", c.source)
	}
	if !endsWithin(sh, 5*time.Second) {
		t.Fatal("the pipe's shell still runs after its pipe was taken")
	}
	if code := sh.ProcessState.ExitCode(); code != 1 {
		t.Errorf("the pipe's shell exited %d, want 1: its wait ended at EOF, it became no helper", code)
	}
	tmuxEnd.Write([]byte("pane output\n"))
	expectRead(t, in, "pane output\n")
	if !c.live() {
		t.Error("a taken pipe is not live")
	}
}

// Where the kernel refuses pidfd_getfd (QTASK_CAPTURE=handover stands in
// for it), the shell becomes the wrapper's own program, which passes the
// pipe over a unix socket and exits.
func TestHandshakeHandsOverThePipe(t *testing.T) {
	c, sh, tmuxEnd, in := connectPaneShell(t, captureHandover)
	if c.source.sock != in || c.handoverFailed {
		t.Errorf("source %+v, handover failed %v; want the pipe itself", c.source, c.handoverFailed)
	}
	if !endsWithin(sh, 5*time.Second) {
		t.Fatal("the handover helper still runs after passing the pipe")
	}
	if code := sh.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the handover helper exited %d", code)
	}
	tmuxEnd.Write([]byte("pane output\n"))
	expectRead(t, in, "pane output\n")
}

// socketPair is a connected pair of unix stream sockets, as tmux makes for
// a pane's pipe.
func socketPair(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// startHelper runs this test binary as the handover helper for l, its stdin
// in, and returns it with its pidfd.
func startHelper(t *testing.T, l *handoverListener, in *os.File) (*exec.Cmd, int) {
	t.Helper()
	helper := exec.Command("/proc/self/exe", HandoverVerb, l.name)
	helper.Stdin = in
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	pidfd, err := unix.PidfdOpen(helper.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pidfd); helper.Process.Kill(); helper.Wait() })
	return helper, pidfd
}

// The wrapper hears only its helper: another process that offers a socket
// first is turned away (abstract socket names can be listed by anyone),
// and the helper's is still taken.
func TestHandoverHearsOnlyItsHelper(t *testing.T) {
	l, err := listenHandover()
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	_, impostorsPipe := socketPair(t)
	if err := Handover(l.name, impostorsPipe); err != nil {
		t.Fatal(err)
	}
	tmuxEnd, pipe := socketPair(t)
	helper, pidfd := startHelper(t, l, pipe)
	got, err := l.receive(helper.Process.Pid, pidfd, 5*time.Second, nil)
	if err != nil {
		t.Fatalf("the helper's pipe was not taken: %v", err)
	}
	defer got.Close()
	tmuxEnd.Write([]byte("pane output\n"))
	expectRead(t, got, "pane output\n")
}

// A handover helper at work holds the pipe: it counts as live (a stall
// check must not replace it) while it runs, and not once it stopped.
func TestHandoverHelperCountsAsLive(t *testing.T) {
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	c := newTestCapture(captureHandover)
	c.setSource(pipeSource{pid: sleeper.Process.Pid})
	if !c.live() {
		t.Error("a running handover helper is not live")
	}
	sleeper.Process.Signal(syscall.SIGSTOP)
	for deadline := time.Now().Add(5 * time.Second); c.live() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if c.live() {
		t.Error("a stopped handover helper is live")
	}
}

// A cat or helper is known by its pidfd, not its pid: once it has exited,
// a process that took its pid (here, this test's own) is neither live nor
// killed by a restart.
func TestCaptureProcessIsKnownByItsPidfd(t *testing.T) {
	gone := exec.Command("/bin/sh", "-c", "exit 0")
	if err := gone.Start(); err != nil {
		t.Fatal(err)
	}
	proc := pidfdOf(gone.Process.Pid)
	if proc == nil {
		t.Fatal("no pidfd for a child")
	}
	gone.Wait()
	c := newTestCapture(captureCat)
	c.setSource(pipeSource{pid: os.Getpid(), pidfd: proc}) // the pid "reused" by a live process: us
	if c.live() {
		t.Error("an exited cat counts as live because its pid runs")
	}
	c.restart() // must not SIGKILL this process
	report, _, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if why := c.release(report); why != "the capture process exited" {
		t.Errorf("release says %q", why)
	}
}

// Only a socket is taken for the pane's pipe, a helper that exits without
// passing one ends the wait at once, and Handover reaches only a wrapper's
// socket.
func TestHandoverTakesOnlyAPanesPipe(t *testing.T) {
	l, err := listenHandover()
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	helper, pidfd := startHelper(t, l, r)
	if f, err := l.receive(helper.Process.Pid, pidfd, 5*time.Second, nil); err == nil {
		f.Close()
		t.Error("a pipe that is not a socket was taken for the pane's pipe")
	}

	quitter := exec.Command("/bin/sh", "-c", "exit 0")
	if err := quitter.Start(); err != nil {
		t.Fatal(err)
	}
	quitterFD, err := unix.PidfdOpen(quitter.Process.Pid, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(quitterFD)
	start := time.Now()
	if _, err := l.receive(quitter.Process.Pid, quitterFD, handoverWait, nil); err == nil || time.Since(start) >= handoverWait {
		t.Errorf("a helper that exited: %v after %v; want an error at once", err, time.Since(start))
	}
	quitter.Wait()

	if err := Handover("elsewhere", r); err == nil || !strings.Contains(err.Error(), "not a wrapper's socket") {
		t.Errorf("Handover to a socket not named as a wrapper's: %v", err)
	}
}

// QTASK_CAPTURE=cat, or a handover that failed: the shell goes
// on as a cat into the wrapper's pipe, which ends when the cat does.
func TestHandshakeFallsBackToCat(t *testing.T) {
	c, sh, tmuxEnd, in := connectPaneShell(t, captureCat)
	if c.source.sock != nil || c.source.pid != sh.Process.Pid {
		t.Errorf("source %+v, want the cat, pid %d", c.source, sh.Process.Pid)
	}
	tmuxEnd.Write([]byte("pane output\n"))
	expectRead(t, in, "pane output\n")
	if comm, _ := os.ReadFile("/proc/" + strconv.Itoa(sh.Process.Pid) + "/comm"); strings.TrimSpace(string(comm)) != "cat" {
		t.Errorf("the shell became %q, want cat", comm)
	}
	if !c.live() {
		t.Error("a running cat is not live")
	}
	syscall.Kill(sh.Process.Pid, syscall.SIGSTOP)
	for deadline := time.Now().Add(5 * time.Second); c.live() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if c.live() {
		t.Error("a stopped cat is live")
	}
	syscall.Kill(sh.Process.Pid, syscall.SIGCONT)
	tmuxEnd.Close()
	if !endsWithin(sh, 5*time.Second) {
		t.Fatal("the cat runs on after its pipe closed")
	}
	if n, err := in.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("after the cat ended, read %d, %v; want EOF", n, err)
	}
}

// A handshake given up, or a wrapper gone, never leaves the pipe's shell
// behind: one waiting exits, and one that comes later does too.
func TestAbandonedHandshakeLeavesNoShell(t *testing.T) {
	h, err := newPipeHandshake()
	if err != nil {
		t.Fatal(err)
	}
	waiting, _ := paneShell(t, h.command())
	if _, err := h.awaitPID(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	h.reported()
	h.abandon()
	if !endsWithin(waiting, 5*time.Second) {
		t.Error("a shell that reported and waits runs on after the handshake was given up")
	}

	late, err := newPipeHandshake()
	if err != nil {
		t.Fatal(err)
	}
	late.abandon()
	comer, _ := paneShell(t, late.command())
	if !endsWithin(comer, 5*time.Second) {
		t.Error("a shell that came after its handshake was given up runs on")
	}
}

// The copier, waiting for a shell that never comes, is halted promptly.
func TestHaltWhileAwaitingTheShell(t *testing.T) {
	h, err := newPipeHandshake()
	if err != nil {
		t.Fatal(err)
	}
	c := newTestCapture(captureTake)
	go c.run(h)
	halted := make(chan struct{})
	go func() { c.halt(); close(halted) }()
	select {
	case <-halted:
	case <-time.After(captureCheck + 5*time.Second):
		t.Fatal("halt still waits for a copier awaiting a shell that never came")
	}
}
