package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/qtask/qtask/tasks"
)

// qtaskBin is the real qtask binary, built once by TestMain: end-to-end
// tests drive exactly what users run.
var qtaskBin string

// testBinEnv hands the built binary to a test binary re-executed by
// isolated, so it is not built twice.
const testBinEnv = "QTASK_TEST_BIN"

func TestMain(m *testing.M) {
	flag.Parse()
	setParallel()
	if bin := os.Getenv(testBinEnv); bin != "" {
		qtaskBin = bin
		os.Exit(m.Run())
	}
	tmuxDir, err := privateTmuxTmpdir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dir, err := buildBinaries()
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "building qtask:", err)
		os.Exit(1)
	}
	qtaskBin = filepath.Join(dir, "qtask")
	code := m.Run()
	os.RemoveAll(dir)
	killServers(tmuxDir)
	os.RemoveAll(tmuxDir)
	os.Exit(code)
}

// binaries are what TestMain builds: qtask, and qtask-exec (the wrapper
// alone) and qtask-mcp (the MCP server) beside it, as installed.
var binaries = []string{"qtask", "qtask-exec", "qtask-mcp"}

// buildBinaries builds qtask's binaries and returns the directory this run
// runs them from, a temp dir of its own (removed after the run). They are
// built in a directory of this user's cache kept from run to run, one per
// checkout (named by a hash of this package's directory), where go build
// finds the last run's binaries up to date and links nothing (linking the
// three took about 1.5 s of the two CPUs at every run, before the first
// test could start), under a lock, then copied out: another run of the
// same checkout that rebuilds after a source change never replaces what
// this one runs. Without a cache this user alone may write to, they are
// built into the temp dir.
//
// -trimpath keeps the source directory out of the compiled packages'
// cache keys, so TestPluginBuildsQtaskWithGo's build of a copy of this
// module (in a temp dir, with the same flag) is served from the cache
// instead of compiling every package of qtask again.
func buildBinaries() (string, error) {
	run, err := os.MkdirTemp("", "qtask-bin")
	if err != nil {
		return "", err
	}
	cache, ok := binCache()
	if !ok {
		return run, goBuild(run)
	}
	lock, err := os.OpenFile(filepath.Join(cache, ".lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return run, err
	}
	defer lock.Close() // and with it the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return run, err
	}
	if err := goBuild(cache); err != nil {
		return run, err
	}
	for _, name := range binaries {
		if err := copyExecutable(filepath.Join(cache, name), filepath.Join(run, name)); err != nil {
			return run, err
		}
	}
	return run, nil
}

// goBuild builds the binaries into dir, as the README builds them.
func goBuild(dir string) error {
	build := exec.Command("go", "build", "-trimpath", "-o", dir+"/", ".", "../qtask-exec", "../qtask-mcp")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	return build.Run()
}

// binCache is this checkout's directory in the user's cache, ok only when
// it and every directory from the cache down are this user's, not
// symlinks, and writable by nobody else: the tests run what is built
// there.
func binCache() (string, bool) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	pkg, err := os.Getwd()
	if err != nil {
		return "", false
	}
	sum := sha256.Sum256([]byte(pkg))
	top := filepath.Join(cache, "qtask-test-bin")
	dir := filepath.Join(top, hex.EncodeToString(sum[:8]))
	if !ownedDir(cache, 0o022) || os.MkdirAll(dir, 0o700) != nil || !ownedDir(top, 0o077) || !ownedDir(dir, 0o077) {
		return "", false
	}
	return dir, true
}

// copyExecutable copies the executable at src to a new file dst.
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ownedDir reports whether dir is a directory (not a symlink) of this
// user's on which others have none of the permission bits in others
// (0o022: nobody else may write; 0o077: nobody else may even look).
func ownedDir(dir string, others fs.FileMode) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm()&others != 0 {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}

// privateTmuxTmpdir points this test process, and everything it starts, at
// a tmux socket directory of its own, and takes it out of any tmux session
// it was started from. A person runs `go test ./...` beside their own tmux
// servers (the quick start's `tmux -L qtask` among them), found through
// $TMUX_TMPDIR and $TMUX: whatever a test runs that falls back to qtask's
// default server, or to tmux's, then lands in this directory (killed when
// the tests end), never on theirs. Tests re-executed by isolated inherit it.
func privateTmuxTmpdir() (string, error) {
	dir, err := os.MkdirTemp("", "qtt")
	if err != nil {
		return "", err
	}
	os.Setenv("TMUX_TMPDIR", dir)
	os.Unsetenv("TMUX")
	os.Unsetenv("TMUX_PANE")
	return dir, nil
}

// waitingParallel is how many parallel tests run at once per CPU unless
// -parallel says otherwise. Go's default, one per CPU, suits tests that
// compute; these mostly wait (on tmux round trips, on the commands they
// start, on a task's end), so at one per CPU the CPUs sit idle most of the
// run. Two per CPU keeps them busy. Four was faster still (83 s against
// about 110 s for the package), but the real agents' TUIs, driven by keys
// typed into their panes, then starved on a 2-CPU machine: the gemini wake
// test lost its typed line in 1 of ~8 CI runs.
const waitingParallel = 2

// setParallel raises -test.parallel to waitingParallel per CPU when the
// command line did not set it (`go test -parallel N` still decides).
func setParallel() {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		per := waitingParallel
		if testing.Short() && os.Getenv("CI") != "true" {
			per = shortParallel
		}
		flag.Set("test.parallel", strconv.Itoa(per*runtime.GOMAXPROCS(0)))
	}
}

// shortParallel is waitingParallel for the inner loop (-short): the real
// agents, whose TUIs starved at four per CPU, are skipped there, and the
// tests left only wait on tmux and their commands.
const shortParallel = 4

// harness is one isolated qtask world: its own state dir, config, HOME and
// a private tmux server on a socket in a temp dir, killed when the test ends.
// Nothing touches the user's tmux server, config or state.
type harness struct {
	t      *testing.T
	root   string
	state  string
	socket string
	config string
	env    []string
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is required for end-to-end tests (.ci/run installs it)")
	}
	// Unix socket paths are limited to ~108 bytes: keep the root short.
	root, err := os.MkdirTemp("", "qt")
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{
		t: t, root: root,
		state:  filepath.Join(root, "state"),
		socket: filepath.Join(root, "tmux.sock"),
		config: filepath.Join(root, "config.toml"),
	}
	home := filepath.Join(root, "home")
	os.MkdirAll(home, 0o700)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "QTASK_STATE_DIR", "QTASK_CONFIG", "QTASK_TMUX_SOCKET", "QTASK_SCOPE",
			"QTASK_TASK_ID", "HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME",
			// git as install runs it reads the test's HOME and repository,
			// never the developer's (tests run from a git hook have GIT_DIR).
			"GIT_CONFIG_GLOBAL", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE":
			continue
		}
		h.env = append(h.env, kv)
	}
	// TMUX_TMPDIR is the root too: a qtask call that falls back to its own
	// server (`tmux -L qtask`) starts it here, where the cleanup kills it.
	h.env = append(h.env, "HOME="+home, "QTASK_STATE_DIR="+h.state, "QTASK_CONFIG="+h.config,
		"QTASK_TMUX_SOCKET="+h.socket, "TMUX_TMPDIR="+root, "PATH="+filepath.Dir(qtaskBin)+":"+os.Getenv("PATH"))
	t.Cleanup(func() {
		killServers(root) // the harness's socket, and any -L server under root
		// The killed server's wrappers settle their tasks on the way out:
		// one still writing once the tree is gone recreates the state
		// directory (OpenStore makes it), and the test leaves it behind.
		awaitNoneNaming(root, 2*time.Second)
		os.RemoveAll(root)
	})
	return h
}

// awaitNoneNaming waits, at most timeout, until no process names dir in
// its command line (a task's wrapper names its state directory there) or
// works in it (an agent in its project, writing its home on the way out).
func awaitNoneNaming(dir string, timeout time.Duration) {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if !anyProcessNaming(dir) {
			return
		}
	}
}

func anyProcessNaming(dir string) bool {
	self := strconv.Itoa(os.Getpid())
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		if p.Name() == self || p.Name()[0] < '0' || p.Name()[0] > '9' {
			continue
		}
		if cmdline, err := os.ReadFile("/proc/" + p.Name() + "/cmdline"); err == nil && bytes.Contains(cmdline, []byte(dir+"/")) {
			return true
		}
		if cwd, err := os.Readlink("/proc/" + p.Name() + "/cwd"); err == nil && strings.HasPrefix(cwd+"/", dir+"/") {
			return true
		}
	}
	return false
}

// writeExecutable writes data to path as an executable (mode 0700) through
// a child process (cat), so no write descriptor of this process ever names
// the file: one would be inherited by whatever a parallel test forks at that
// moment, until that child execs, and running the file then fails with
// "text file busy" (ETXTBSY).
func writeExecutable(t *testing.T, path string, data []byte) {
	t.Helper()
	cmd := exec.Command("sh", "-c", `umask 077 && cat > "$1" && chmod 700 "$1"`, "sh", path)
	cmd.Stdin = bytes.NewReader(data)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("writing %s: %v %s", path, err, out)
	}
}

// writeConfig writes the harness's config file.
func (h *harness) writeConfig(toml string) {
	h.t.Helper()
	if err := os.WriteFile(h.config, []byte(toml), 0o600); err != nil {
		h.t.Fatal(err)
	}
}

type result struct {
	stdout, stderr string
	code           int
}

// qtaskDeadline bounds one qtask invocation, so a hang fails its test
// instead of stalling the whole suite.
const qtaskDeadline = 2 * time.Minute

// qtask runs the binary with extra environment entries (NAME=value) in dir.
func (h *harness) qtaskIn(dir string, extraEnv []string, args ...string) result {
	h.t.Helper()
	return h.qtaskStdin(dir, extraEnv, "", args...)
}

// qtaskStdin is qtaskIn with stdin (empty: none).
func (h *harness) qtaskStdin(dir string, extraEnv []string, stdin string, args ...string) result {
	h.t.Helper()
	return h.qtaskWithin(qtaskDeadline, dir, extraEnv, stdin, args...)
}

// qtaskWithin is qtaskStdin killed, and the test failed, after deadline:
// for a test of what must end soon.
func (h *harness) qtaskWithin(deadline time.Duration, dir string, extraEnv []string, stdin string, args ...string) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, qtaskBin, args...)
	cmd.Env = append(append([]string{}, h.env...), extraEnv...)
	cmd.Dir = dir
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		h.t.Fatalf("qtask %s hung: killed after %s\nstdout: %s\nstderr: %s", strings.Join(args, " "), deadline, &out, &errOut)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatalf("run qtask %v: %v", args, err)
	}
	return result{out.String(), errOut.String(), code}
}

func (h *harness) qtask(args ...string) result {
	h.t.Helper()
	return h.qtaskIn(h.root, nil, args...)
}

// mustQtask runs qtask and fails the test unless it exits 0.
func (h *harness) mustQtask(args ...string) string {
	h.t.Helper()
	r := h.qtask(args...)
	if r.code != 0 {
		h.t.Fatalf("qtask %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// start runs `qtask run --bg --json -- command` and returns the task.
func (h *harness) start(command string, flags ...string) tasks.Task {
	h.t.Helper()
	args := append(append([]string{"run", "--bg", "--json"}, flags...), "--", command)
	return decodeTask(h.t, h.mustQtask(args...))
}

func decodeTask(t *testing.T, s string) tasks.Task {
	t.Helper()
	var task tasks.Task
	if err := json.Unmarshal([]byte(s), &task); err != nil {
		t.Fatalf("decode task JSON %q: %v", s, err)
	}
	return task
}

// status returns the task as `qtask status --json` reports it.
func (h *harness) status(id string) tasks.Task {
	h.t.Helper()
	return decodeTask(h.t, h.mustQtask("status", "--json", id))
}

// wait waits for the task (bounded, so a hang fails rather than stalls CI)
// and returns it as settled.
func (h *harness) wait(id string) tasks.Task {
	h.t.Helper()
	r := h.qtask("wait", "--timeout", "60s", id)
	if r.code == exitTimeout {
		h.t.Fatalf("task %s did not end within 60s; output:\n%s", id, h.output(id))
	}
	return h.status(id)
}

// output is the task's output file as `qtask logs` prints it.
func (h *harness) output(id string) string {
	h.t.Helper()
	return h.mustQtask("logs", id)
}

// tmux runs tmux against the harness's private server, with the
// harness's environment (so a server it starts gives panes that too).
func (h *harness) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", h.socket, "-f", "/dev/null"}, args...)...)
	cmd.Env = h.env
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// awaitDead waits until process pid has died: gone, or a zombie, which
// qtask takes for dead too. Waiting for its parent to reap it would hang:
// under load tmux 3.3a was seen to leave a killed pane process a zombie
// until some later SIGCHLD (20 s and more), with the pane long closed.
func awaitDead(t *testing.T, pid int) {
	t.Helper()
	eventually(t, fmt.Sprintf("process %d to die", pid), func() bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		return err != nil || zombie(stat)
	})
}

// A qtask call of a test that names no tmux server (no QTASK_TMUX_SOCKET,
// not inside tmux) starts qtask's own server, `tmux -L qtask`, in the
// test's world and never on the caller's: the person running the tests
// may have theirs running with tasks in it (the README's quick start
// starts one), found through the TMUX_TMPDIR they share with `go test`.
func TestDefaultServerStaysInTheTestsWorld(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET="}, "run", "--bg", "--", "sleep 60")
	if r.code != 0 {
		t.Fatalf("qtask run --bg on its default server: exit %d %s", r.code, r.stderr)
	}
	own := filepath.Join(h.root, fmt.Sprintf("tmux-%d", os.Getuid()), "qtask")
	if err := exec.Command("tmux", "-S", own, "has-session", "-t", "qtask").Run(); err != nil {
		t.Fatalf("qtask's default server is not in the test's world (%s): %v", own, err)
	}
}
