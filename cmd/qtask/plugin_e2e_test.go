package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/qtask/qtask/internal/testenv"
	"github.com/qtask/qtask/tasks"
)

// pluginScript is scripts/qtask.tmux of this checkout.
func pluginScript(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	path := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "qtask.tmux")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("plugin script: %v", err)
	}
	return path
}

// shellSession starts a session named name running a bare interactive bash
// (qtask on its PATH, from the harness) and returns its pane.
func (h *harness) shellSession(name string) string {
	h.t.Helper()
	if _, err := h.tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "40", "-c", h.root,
		"--", "bash", "--norc", "--noprofile", "-i"); err != nil {
		h.t.Fatal(err)
	}
	pane, err := h.tmux("display-message", "-p", "-t", "="+name+":", "#{pane_id}")
	if err != nil {
		h.t.Fatal(err)
	}
	return pane
}

// loadPlugin runs the plugin as tmux.conf's run-shell line would.
func (h *harness) loadPlugin() {
	h.t.Helper()
	if out, err := h.tmux("run-shell", pluginScript(h.t)); err != nil || out != "" {
		h.t.Fatalf("loading the plugin: %v %q", err, out)
	}
}

// screen is what pane shows.
func (h *harness) screen(pane string) string {
	s, _ := h.tmux("capture-pane", "-p", "-J", "-t", pane)
	return s
}

func (h *harness) waitScreen(pane, what string) {
	h.t.Helper()
	eventually(h.t, "pane "+pane+" to show "+what, func() bool { return strings.Contains(h.screen(pane), what) })
}

// pluginWorld is a harness whose server loaded the plugin, with a bash
// session "work" (its pane returned) seen by a client on a pty.
func pluginWorld(t *testing.T) (*harness, string, *ttyClient) {
	h := newHarness(t)
	pane := h.shellSession("work")
	h.loadPlugin()
	return h, pane, h.ptyClient("work")
}

// checkNotInMode fails the test if pane is in a mode (view mode after a
// key binding printed something), where typing goes nowhere.
func (h *harness) checkNotInMode(pane string) {
	h.t.Helper()
	if mode, _ := h.tmux("display-message", "-p", "-t", pane, "#{pane_in_mode}"); mode != "0" {
		h.t.Fatalf("pane %s is in a mode (pane_in_mode=%q): typing would go nowhere", pane, mode)
	}
}

// The promote key pressed in the pane where `qtask run` streams a task — the
// pane the person is looking at — promotes that task: the waiting run is
// released with 125, the shell takes the next typed line at once, the pane
// never enters view mode, and the result is a message on the status line.
func TestPluginPromoteKeyFromCallerPane(t *testing.T) {
	t.Parallel()
	h, pane, c := pluginWorld(t)

	c.typeKeys("qtask run -- 'for i in $(seq 1 900); do echo tick $i; sleep 0.1; done'\r")
	h.waitScreen(pane, "tick 3\n")
	c.pressPrefixKey("B")
	h.waitScreen(pane, "promoted to background as ")
	c.typeKeys("echo rc=$? typed-$((6*7))\r")
	h.waitScreen(pane, "rc=125 typed-42")
	h.checkNotInMode(pane)
	task := h.lastTask()
	if !task.Running() || !task.Background {
		t.Fatalf("task after the key: %s background=%v, want running in the background", task.Status, task.Background)
	}
	c.waitDrawn("qtask: " + task.ID + " → background")
	h.mustQtask("stop", task.ID)
}

// The key on a pane where nothing runs says so on the status line, and the
// pane stays usable.
func TestPluginPromoteKeyNothingRunning(t *testing.T) {
	t.Parallel()
	h, pane, c := pluginWorld(t)
	c.pressPrefixKey("B")
	c.waitDrawn("qtask: nothing running in pane " + pane)
	c.typeKeys("echo still-$((2+3))\r")
	h.waitScreen(pane, "still-5")
	h.checkNotInMode(pane)
}

// The key on a pane whose shell runs a command typed at its prompt, but
// has not loaded qtask's shell hooks, says how to load them (the line
// `qtask doctor` gives), not just that nothing runs; the command runs on
// and the pane stays usable.
func TestPluginPromoteKeyWithoutShellHooks(t *testing.T) {
	t.Parallel()
	h, pane, c := pluginWorld(t) // bash --norc: no hooks
	c.typeKeys("sleep 30\r")
	eventually(t, "sleep to run in the pane's foreground", func() bool {
		cmd, _ := h.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}")
		return cmd == "sleep"
	})
	c.pressPrefixKey("B")
	c.waitDrawn(`qtask: cannot promote what runs in pane ` + pane + `: its bash has no qtask hooks; add eval "$(qtask init bash)" in ~/.bashrc`)
	h.checkNotInMode(pane)
	if cmd, _ := h.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}"); cmd != "sleep" {
		t.Fatalf("the typed command is gone after the key: the pane runs %q", cmd)
	}
	c.typeKeys("\x03echo still-$((2+3))\r")
	h.waitScreen(pane, "still-5")
}

// Loading the plugin twice changes nothing, and it never sets an option it
// does not own (status-left, status-right, anything not @qtask).
func TestPluginLoadIdempotent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	h.tmux("set-option", "-g", "status-right", "MINE #{@qtask_status}")
	h.tmux("bind-key", "-T", "prefix", "T", "display-message", "user's own T")
	h.tmux("set-hook", "-g", "window-unlinked[0]", "display-message 'user hook'")
	options := func() string { s, _ := h.tmux("show-options", "-g"); return s }
	keys := func() string { s, _ := h.tmux("list-keys"); return s }
	hooks := func() string { s, _ := h.tmux("show-hooks", "-g"); return s }
	optsBefore, keysBefore := options(), keys()
	h.loadPlugin()
	optsOnce, keysOnce, hooksOnce := options(), keys(), hooks()
	h.loadPlugin()
	if options() != optsOnce || keys() != keysOnce || hooks() != hooksOnce {
		t.Fatalf("a second load changed tmux:\noptions %q\n→ %q\nkeys %q\n→ %q\nhooks %q\n→ %q", optsOnce, options(), keysOnce, keys(), hooksOnce, hooks())
	}
	for _, want := range []string{"window-unlinked[0] display-message \"user hook\"", "window-unlinked[1] run-shell -b", "after-kill-pane[0] run-shell -b"} {
		if !strings.Contains(hooksOnce, want) {
			t.Errorf("hooks after loading lack %q:\n%s", want, hooksOnce)
		}
	}
	for _, line := range strings.Split(optsOnce, "\n") {
		if !strings.Contains(optsBefore, line) && !strings.HasPrefix(line, "@qtask") {
			t.Errorf("the plugin set an option it does not own: %s", line)
		}
	}
	if !strings.Contains(keysOnce, "user's own T") {
		t.Errorf("the plugin replaced the user's prefix T")
	}
	findings, _ := h.doctor()
	if f := findings["plugin key bindings"]; f == nil || f["ok"] != false || !strings.Contains(f["detail"].(string), "prefix T (task menu, @qtask-menu-key)") {
		t.Errorf("doctor does not say the menu key is taken: %v", f)
	}
	if b, _ := h.tmux("list-keys", "-T", "prefix", "B"); !strings.Contains(b, "'promote' --tmux-client") || keysBefore == keysOnce {
		t.Errorf("no promote binding after loading: %q", b)
	}
}

// @qtask-promote-key moves the binding, and a reload frees the old key.
func TestPluginPromoteKeyOption(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	h.loadPlugin()
	h.tmux("set-option", "-g", "@qtask-promote-key", "M-p")
	h.loadPlugin()
	if b, _ := h.tmux("list-keys", "-T", "prefix", "M-p"); !strings.Contains(b, "'promote' --tmux-client") {
		t.Fatalf("prefix M-p: %q, want the promote binding", b)
	}
	if b, err := h.tmux("list-keys", "-T", "prefix", "B"); err == nil {
		t.Fatalf("prefix B still bound after the key moved: %q", b)
	}
}

// @qtask-menu-style changed after a load takes effect on the reload: the
// default menu key, bound by qtask in the other style, is qtask's to rebind
// (it was taken for the user's own and kept the popup).
func TestPluginReloadSwitchesMenuStyle(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	h.tmux("set-option", "-g", "@qtask-menu-style", "popup")
	h.loadPlugin()
	if b, _ := h.tmux("list-keys", "-T", "prefix", "T"); !strings.Contains(b, "display-popup") {
		t.Fatalf("prefix T with @qtask-menu-style popup: %q, want the popup", b)
	}
	h.tmux("set-option", "-g", "@qtask-menu-style", "menu")
	h.loadPlugin()
	if b, _ := h.tmux("list-keys", "-T", "prefix", "T"); !strings.Contains(b, "'_menu' --tmux-client") {
		t.Fatalf("prefix T after switching to @qtask-menu-style menu: %q, want the display-menu binding", b)
	}
	h.tmux("set-option", "-g", "@qtask-menu-style", "popup")
	h.loadPlugin()
	if b, _ := h.tmux("list-keys", "-T", "prefix", "T"); !strings.Contains(b, "display-popup") {
		t.Fatalf("prefix T after switching back to popup: %q, want the popup", b)
	}
}

// tpmLoader is where Debian's tmux-plugin-manager package puts TPM.
const tpmLoader = "/usr/share/tmux-plugin-manager/tpm"

// The README's TPM line works: TPM, as a tmux.conf runs it, finds this
// checkout as ~/.tmux/plugins/qtask, runs the *.tmux files at its top level
// (only those: the plugin itself is scripts/qtask.tmux), and the plugin
// binds both keys and sets the status segment. Before qtask.tmux existed at
// the top level, the TPM line bound nothing and said nothing.
func TestPluginLoadsThroughTPM(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(tpmLoader); err != nil {
		testenv.Unavailable(t, "needs TPM at %s (apt-get install tmux-plugin-manager): %v", tpmLoader, err)
	}
	h := newHarness(t)
	home := filepath.Join(h.root, "home") // the harness's HOME, where TPM looks
	if err := os.MkdirAll(filepath.Join(home, ".tmux", "plugins"), 0o700); err != nil {
		t.Fatal(err)
	}
	checkout := filepath.Dir(filepath.Dir(pluginScript(t)))
	if err := os.Symlink(checkout, filepath.Join(home, ".tmux", "plugins", "qtask")); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(home, ".tmux.conf")
	if err := os.WriteFile(conf, []byte("set -g @plugin 'qtask/qtask'\nrun-shell '"+tpmLoader+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The server reads the tmux.conf as it starts, as a person's does.
	start := exec.Command("tmux", "-S", h.socket, "-f", conf, "new-session", "-d", "-s", "work")
	start.Env = h.env
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("starting tmux with TPM in its tmux.conf: %v %s", err, out)
	}
	eventually(t, "TPM to load the plugin: prefix B and prefix T bound, @qtask_status set", func() bool {
		b, _ := h.tmux("list-keys", "-T", "prefix", "B")
		m, _ := h.tmux("list-keys", "-T", "prefix", "T")
		_, err := h.tmux("show-options", "-g", "@qtask_status")
		return strings.Contains(b, "'promote' --tmux-client") && strings.Contains(m, "--tmux-client") && err == nil
	})
}

// Without qtask on PATH, in the plugin dir or Go to build it, loading the
// plugin shows one line saying how to install, and binds nothing.
func TestPluginWithoutQtask(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	c := h.ptyClient("work")
	// A PATH with the tools the script needs, and no qtask or go.
	bin := filepath.Join(h.root, "bin")
	os.Mkdir(bin, 0o700)
	for _, tool := range []string{"bash", "dirname", "tmux"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		os.Symlink(path, filepath.Join(bin, tool))
	}
	// The script in a plugin directory of its own: this checkout's bin/
	// holds a qtask once the README's quick start has built one there.
	script, err := os.ReadFile(pluginScript(t))
	if err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(h.root, "plugin", "scripts", "qtask.tmux")
	os.MkdirAll(filepath.Dir(plugin), 0o700)
	writeExecutable(t, plugin, script)
	if _, err := h.tmux("run-shell", "PATH="+bin+" "+plugin); err != nil {
		t.Fatal(err)
	}
	c.waitDrawn("qtask: not installed; install Go")
	if b, err := h.tmux("list-keys", "-T", "prefix", "B"); err == nil {
		t.Fatalf("prefix B bound without qtask: %q", b)
	}
}

// prefix T opens the task menu in a popup: it lists the tasks, running and
// newest first; a key moves down and s stops the task there; x refuses to
// remove the running one and removes the stopped one with its output; q
// closes it and the pane takes typing again.
func TestPluginMenuStopsAndRemovesTask(t *testing.T) {
	t.Parallel()
	h, pane, c := pluginWorld(t)
	first := h.start("sleep 60", "--name", "first-task")
	second := h.start("sleep 60", "--name", "second-task")
	c.pressPrefixKey("T")
	c.waitDrawn("second-task")
	c.waitDrawn("first-task")
	if !h.menuRunning() {
		t.Fatal("the menu is drawn but no qtask ui process is found")
	}
	c.typeKeys("\x1b[B")
	c.waitDrawn("> " + first.ID)
	c.typeKeys("s")
	eventually(t, "the first task to be stopped from the menu", func() bool {
		return h.status(first.ID).Status == tasks.StatusCancelled
	})
	if st := h.status(second.ID); !st.Running() {
		t.Fatalf("the other task was hit too: %s", st.StatusText())
	}
	// Keys reach the menu in order: up, x asks about the running task, and
	// any key but y keeps it.
	c.typeKeys("\x1b[A")
	c.typeKeys("x")
	c.waitDrawn("task " + second.ID + " is running: y stops it")
	c.typeKeys("n")
	c.waitDrawn("task " + second.ID + " kept")
	c.typeKeys("\x1b[B")
	c.typeKeys("x")
	c.waitDrawn("Removed task " + first.ID)
	if _, err := os.Stat(first.OutputPath); !os.IsNotExist(err) {
		t.Fatalf("the removed task's output is still there: %v", err)
	}
	if r := h.qtask("status", first.ID); r.code == 0 {
		t.Fatalf("the removed task still has a status: %s", r.stdout)
	}
	c.typeKeys("q")
	// The popup closes with the menu, but tmux closes it a moment after the
	// process exits, and keys typed before that go to the popup. tmux shows
	// no format for an open popup, so the line is typed again each second
	// until the pane runs it.
	eventually(t, "the menu to exit", func() bool { return !h.menuRunning() })
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(h.screen(pane), "menu-12") {
		if time.Now().After(deadline) {
			t.Fatalf("pane %s never ran a line typed after the menu closed:\n%s", pane, h.screen(pane))
		}
		c.typeKeys("echo menu-$((3*4))\r")
		for end := time.Now().Add(time.Second); time.Now().Before(end) && !strings.Contains(h.screen(pane), "menu-12"); {
			time.Sleep(50 * time.Millisecond)
		}
	}
	h.checkNotInMode(pane)
	h.mustQtask("stop", second.ID)
}

// menuRunning reports whether a `qtask ui` of this harness's state runs.
func (h *harness) menuRunning() bool {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		if !strings.HasPrefix(string(cmdline), qtaskBin+"\x00ui\x00") {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join(p, "environ"))
		if strings.Contains(string(environ), "QTASK_STATE_DIR="+h.state+"\x00") {
			return true
		}
	}
	return false
}

// Without qtask on PATH but with Go, the plugin builds qtask into its own
// bin/ (CGO_ENABLED=0) and binds its keys with it.
func TestPluginBuildsQtaskWithGo(t *testing.T) {
	testenv.SkipShort(t, "builds qtask with go build")
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	// A copy of this module as the plugin's directory.
	plugin := filepath.Join(h.root, "plugin")
	files, err := exec.Command("git", "-C", filepath.Dir(filepath.Dir(pluginScript(t))), "ls-files", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	src := filepath.Dir(filepath.Dir(pluginScript(t)))
	for _, f := range strings.Fields(string(files)) {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			continue // listed but deleted in the work tree
		}
		os.MkdirAll(filepath.Dir(filepath.Join(plugin, f)), 0o700)
		writeExecutable(t, filepath.Join(plugin, f), data)
	}
	// A PATH with the script's tools and go, and no qtask.
	bin := filepath.Join(h.root, "tools")
	os.Mkdir(bin, 0o700)
	for _, tool := range []string{"bash", "dirname", "tmux", "go"} {
		path, err := exec.LookPath(tool)
		if err != nil {
			t.Fatal(err)
		}
		os.Symlink(path, filepath.Join(bin, tool))
	}
	gocache, _ := exec.Command("go", "env", "GOCACHE").Output()
	gomodcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	// -trimpath as TestMain builds qtask: the packages it compiled serve
	// this build from the cache, though the copy's directory differs.
	env := "PATH=" + bin + " GOCACHE=" + strings.TrimSpace(string(gocache)) + " GOMODCACHE=" + strings.TrimSpace(string(gomodcache)) + " GOFLAGS='-mod=mod -trimpath' GOPROXY=off "
	if out, err := h.tmux("run-shell", env+filepath.Join(plugin, "scripts", "qtask.tmux")); err != nil {
		t.Fatalf("loading the plugin: %v %s", err, out)
	}
	built := filepath.Join(plugin, "bin", "qtask")
	if _, err := os.Stat(built); err != nil {
		t.Fatalf("the plugin did not build qtask: %v", err)
	}
	if info, _ := exec.Command("go", "version", "-m", built).Output(); !strings.Contains(string(info), "CGO_ENABLED=0") {
		t.Errorf("qtask was not built with CGO_ENABLED=0:\n%s", info)
	}
	if b, _ := h.tmux("list-keys", "-T", "prefix", "B"); !strings.Contains(b, built) {
		t.Fatalf("prefix B does not run the built qtask: %q", b)
	}
}

// recordStatus is the status a task's record holds now, read from the file
// itself: unlike every qtask command it reconciles nothing, so a task that
// shows as ended here was settled without anyone asking.
func (h *harness) recordStatus(id string) string {
	data, err := os.ReadFile(filepath.Join(h.state, "tasks", id+".json"))
	if err != nil {
		h.t.Fatalf("record of %s: %v", id, err)
	}
	var r struct{ Status string }
	if err := json.Unmarshal(data, &r); err != nil {
		h.t.Fatalf("record of %s: %v", id, err)
	}
	return r.Status
}

// A person promotes a command typed in a hooked shell (prefix B), views it
// (qtask attach) and kills its pane (prefix x, y). The pane's shell was the
// task's only watcher, so before the plugin's hook the task stayed
// "running", and the status segment said ⏵1, until some qtask command
// happened to read it. Now tmux tells qtask: the record is settled and the
// segment updated with no qtask command run by the test.
func TestPluginKilledPaneSettlesTask(t *testing.T) {
	t.Parallel()
	h, pane, c := pluginWorld(t)
	c.typeKeys(`eval "$(qtask init bash)"` + "\r")
	c.typeKeys("echo hooks-$((20+1))\r")
	h.waitScreen(pane, "hooks-21\n")
	c.typeKeys("sleep 600\r")
	eventually(t, "sleep to run in the pane", func() bool {
		cmd, _ := h.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}")
		return cmd == "sleep"
	})
	c.pressPrefixKey("B")
	c.waitDrawn("→ background")
	task := h.lastTask()
	if !task.Running() || task.PaneID != pane {
		t.Fatalf("promoted task: %s in pane %s, want running in %s", task.Status, task.PaneID, pane)
	}
	eventually(t, "the status segment to count the task", func() bool {
		s, _ := h.tmux("-u", "show-options", "-gv", "@qtask_status") // -u: see wantStatus
		return s == "⏵1"
	})
	// The fresh shell is a login shell (its profile sets PATH): the full path.
	c.typeKeys(qtaskBin + " attach " + task.ID + "\r")
	deadline := time.Now().Add(20 * time.Second)
	for shown := ""; shown != pane; shown, _ = h.tmux("display-message", "-p", "-c", c.name, "#{pane_id}") {
		if time.Now().After(deadline) {
			fresh, _ := h.tmux("display-message", "-p", "-t", "=work:", "#{pane_id}")
			t.Fatalf("the client shows pane %s, not the task's %s; the shell shows:\n%s", shown, pane, h.screen(fresh))
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.pressPrefixKey("x")
	c.waitDrawn("? (y/n)")
	c.typeKeys("y")
	eventually(t, "the killed pane's task to be settled with no qtask command run", func() bool {
		return h.recordStatus(task.ID) != string(tasks.StatusRunning)
	})
	if st := h.recordStatus(task.ID); st != string(tasks.StatusFailed) {
		t.Fatalf("task after its pane was killed: %s, want failed (lost)", st)
	}
	eventually(t, "the status segment to show the failure", func() bool {
		s, _ := h.tmux("-u", "show-options", "-gv", "@qtask_status") // -u: see wantStatus
		return s == "✗1"
	})
}

// With @qtask-menu-style menu (what the plugin picks on a tmux before 3.2,
// which has no popups; only 3.3a is installed here, so the test forces it),
// prefix T shows the tasks in tmux's own display-menu, running and newest
// first; choosing one shows its actions; s stops it and x removes it, each
// saying so on the status line; the pane takes typing afterwards.
func TestPluginMenuFallbackDisplayMenu(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	h.tmux("set-option", "-g", "@qtask-menu-style", "menu")
	h.loadPlugin()
	if b, _ := h.tmux("list-keys", "-T", "prefix", "T"); !strings.Contains(b, "'_menu' --tmux-client") {
		t.Fatalf("prefix T with @qtask-menu-style menu: %q, want the display-menu binding", b)
	}
	c := h.ptyClient("work")
	first := h.start("sleep 60", "--name", "first-task")
	second := h.start("sleep 60", "--name", "second-task")
	c.pressPrefixKey("T")
	c.waitDrawn("qtask: 2 tasks")
	c.waitDrawn(second.ID + "  running")
	c.waitDrawn(first.ID + "  running")
	c.typeKeys("2") // the second row: the older task
	c.waitDrawn("Stop")
	c.typeKeys("s")
	c.waitDrawn("qtask: Stopped task " + first.ID)
	if st := h.status(first.ID); st.Status != tasks.StatusCancelled {
		t.Fatalf("the task chosen in the menu: %s, want cancelled", st.StatusText())
	}
	if st := h.status(second.ID); !st.Running() {
		t.Fatalf("the other task was hit too: %s", st.StatusText())
	}
	mark := c.mark()
	c.pressPrefixKey("T")
	c.waitDrawnSince(mark, first.ID+"  cancelled")
	mark = c.mark()
	c.typeKeys("2")
	c.waitDrawnSince(mark, "Remove")
	c.typeKeys("x")
	c.waitDrawn("qtask: Removed task " + first.ID)
	if r := h.qtask("status", first.ID); r.code == 0 {
		t.Fatalf("the removed task still has a status: %s", r.stdout)
	}
	c.typeKeys("echo menu-$((5*5))\r")
	h.waitScreen(pane, "menu-25")
	h.checkNotInMode(pane)
	h.mustQtask("stop", second.ID)
}

// qtask attach typed in a pane says how to get back, and the way it names
// works when a person types it: prefix L when the task's pane is in another
// session (background tasks' own), prefix l when it is in the user's
// session (config session = the user's), where L would leave for whatever
// session was last.
func TestAttachHintGoesBack(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, session, key, hint string
	}{
		{"other session", "", "L", "prefix L goes back to the session you were in"},
		{"same session", "work", "l", "prefix l goes back to the window you were in"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if c.session != "" {
				h.writeConfig(fmt.Sprintf("session = %q\n", c.session))
			}
			pane := h.shellSession("work")
			client := h.ptyClient("work")
			task := h.start("sleep 60")
			hint := filepath.Join(h.root, "hint")
			client.typeKeys("qtask attach " + task.ID + " 2>" + hint + "\r")
			shown := func(want string) func() bool {
				return func() bool {
					p, _ := h.tmux("display-message", "-p", "-c", client.name, "#{pane_id}")
					return p == want
				}
			}
			eventually(t, "the client to show the task's pane", shown(task.PaneID))
			eventually(t, "attach to exit", func() bool { return !h.attachRunning() })
			said, _ := os.ReadFile(hint)
			if want := "qtask: showing task " + task.ID + "; " + c.hint + "\n"; string(said) != want {
				t.Fatalf("attach said %q, want %q", said, want)
			}
			client.pressPrefixKey(c.key)
			eventually(t, "prefix "+c.key+" to go back to the user's pane", shown(pane))
			h.mustQtask("stop", task.ID)
		})
	}
}

// attachRunning reports whether a `qtask attach` of this harness runs.
func (h *harness) attachRunning() bool {
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(p, "environ"))
		if strings.HasPrefix(string(cmdline), "qtask\x00attach\x00") && strings.Contains(string(environ), "QTASK_STATE_DIR="+h.state+"\x00") {
			return true
		}
	}
	return false
}

// Outside tmux, when tmux refuses to attach (here: no terminal), qtask
// says so in its own line, tmux's reason included, and exits 1; before, it
// had exec'd tmux, which printed its bare reason and nothing said it was
// qtask's attach.
func TestAttachRefusalIsAQtaskLine(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	task := h.start("sleep 60")
	r := h.qtask("attach", task.ID)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != exitError || lines[len(lines)-1] != "qtask: tmux attach-session: open terminal failed: not a terminal" {
		t.Fatalf("attach without a terminal: exit %d, stderr %q; want exit 1 ending with tmux's reason as a qtask: line", r.code, r.stderr)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "qtask: ") {
			t.Errorf("a line of attach's stderr is not qtask's: %q", l)
		}
	}
	h.mustQtask("stop", task.ID)
}

// The task menu (`qtask ui`, prefix T's popup) lines its columns up
// whatever the mix of statuses: "completed (exit 0)" is wider than the
// status column used to be, and pushed its row's runtime and name to the
// right of a "running" row's (found by a new user's trial).
func TestMenuColumnsLineUp(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	done := h.start("true", "--name", "done-task")
	failed := h.start("exit 3", "--name", "failed-task")
	running := h.start("sleep 60", "--name", "running-task")
	h.wait(done.ID)
	h.wait(failed.ID)
	h.openUI(pane)
	screen := h.screen(pane)
	column := map[string]int{}
	for _, line := range strings.Split(screen, "\n") {
		for _, name := range []string{"done-task", "failed-task", "running-task"} {
			if i := strings.Index(line, name); i >= 0 {
				column[name] = i
			}
		}
	}
	if len(column) != 3 {
		t.Fatalf("the menu does not show the three tasks on their own rows:\n%s", screen)
	}
	if column["done-task"] != column["failed-task"] || column["done-task"] != column["running-task"] {
		t.Fatalf("the names start in different columns (%v):\n%s", column, screen)
	}
	h.tmux("send-keys", "-t", pane, "q")
	h.mustQtask("stop", running.ID)
}

// Enter in the task menu's popup (prefix T) shows the chosen task's pane
// on the client that opened the popup, as `qtask attach` does in a pane.
// A popup has $TMUX but no $TMUX_PANE, so the attach it ran took itself
// for outside tmux and started a second tmux client nested in the popup
// (found by a new user's trial).
func TestPluginMenuViewSwitchesClient(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	task := h.start("sleep 60", "--name", "view-me")
	c.pressPrefixKey("T")
	c.waitDrawn("view-me")
	c.typeKeys("\r")
	eventually(t, "the client to show the task's pane", func() bool {
		shown, _ := h.tmux("display-message", "-p", "-c", c.name, "#{pane_id}")
		return shown == task.PaneID
	})
	eventually(t, "the menu to exit", func() bool { return !h.menuRunning() })
	if clients, _ := h.tmux("list-clients", "-F", "#{client_name}"); clients != c.name {
		t.Fatalf("clients after viewing a task from the menu: %q, want only %s", clients, c.name)
	}
	h.mustQtask("stop", task.ID)
}

// Enter in the task menu's popup switches the client whose popup it is,
// with another client attached to the server (a second terminal) that was
// used while the popup was open. attach ran switch-client without naming
// the client, and tmux then picked the client used last: keys typed into a
// popup do not count as use, so the other terminal switched and the one
// where Enter was pressed stayed where it was.
func TestPluginMenuViewSwitchesItsOwnClient(t *testing.T) {
	t.Parallel()
	for _, presser := range []int{1, 0} {
		t.Run(fmt.Sprintf("key in client %d of 2", presser+1), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.shellSession("work")
			h.shellSession("desk")
			h.loadPlugin()
			clients := []*ttyClient{h.ptyClient("work"), h.ptyClient("desk")}
			me, other := clients[presser], clients[1-presser]
			task := h.start("sleep 60", "--name", "view-me")
			taskView, _ := h.tmux("display-message", "-p", "-t", task.PaneID, "#{session_name}:#{window_id}")
			views := func() string {
				out, _ := h.tmux("list-clients", "-F", "#{client_tty} #{session_name}:#{window_id}")
				return out
			}
			view := func(c *ttyClient) string {
				for _, line := range strings.Split(views(), "\n") {
					if tty, where, _ := strings.Cut(line, " "); tty == c.name {
						return where
					}
				}
				return ""
			}
			otherBefore := view(other)
			me.pressPrefixKey("T")
			me.waitDrawn("view-me")
			other.typeKeys("echo used-meanwhile")
			other.waitDrawn("used-meanwhile")
			me.typeKeys("\r")
			eventuallyWithin(t, 20*time.Second, "client "+me.name+" to show the task's window "+taskView,
				func() bool { return view(me) == taskView }, views)
			if got := view(other); got != otherBefore {
				t.Fatalf("the other client %s moved from %s to %s; clients:\n%s", other.name, otherBefore, got, views())
			}
			h.mustQtask("stop", task.ID)
		})
	}
}

// f in the task menu follows a task; when the task ends, its last lines
// (often why it failed) stay on the screen until a key is pressed. The
// list was drawn over them at once (found by a new user's trial).
func TestMenuFollowKeepsTheEndOnScreen(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	gate := h.fifoGate()
	task := h.start("read x < " + gate + "; echo the-last-words; exit 3")
	h.openUI(pane)
	h.tmux("send-keys", "-t", pane, "f")
	eventually(t, "the follow to start", func() bool { return !strings.Contains(h.screen(pane), "q quit") })
	h.openFifoGate(gate)
	h.waitScreen(pane, "task "+task.ID+" ended; press a key")
	if screen := h.screen(pane); !strings.Contains(screen, "the-last-words") {
		t.Fatalf("the task's last output is not on the screen after its follow ended:\n%s", screen)
	}
	h.tmux("send-keys", "-t", pane, "j")
	h.waitScreen(pane, "q quit")
	h.tmux("send-keys", "-t", pane, "q")
}

// Enter in the task menu on a task that has ended says so on the menu's
// bottom line and keeps the menu open. It ran attach, whose refusal was
// printed and wiped at once as the menu, and with it the popup, closed
// (found by a new user's trial).
func TestMenuViewOfEndedTaskSaysSo(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	task := h.start("exit 0")
	h.wait(task.ID)
	h.openUI(pane)
	h.tmux("send-keys", "-t", pane, "Enter")
	h.waitScreen(pane, "task "+task.ID+" is not running (completed (exit 0))")
	if !h.menuRunning() {
		t.Fatalf("the menu closed on Enter on an ended task:\n%s", h.screen(pane))
	}
	h.tmux("send-keys", "-t", pane, "q")
}

// openUI types `qtask ui` into pane's shell and waits for the list.
func (h *harness) openUI(pane string) {
	h.t.Helper()
	if _, err := h.tmux("send-keys", "-t", pane, "-l", qtaskBin+" ui\r"); err != nil {
		h.t.Fatal(err)
	}
	h.waitScreen(pane, "q quit")
}

// TestDoctorReportsAnOlderPopupBinding: the menu key as an older qtask
// bound it, a popup without --tmux-client (Enter in it could switch
// another terminal's client), is still qtask's: doctor reports it, and a
// reload of the plugin replaces it.
func TestDoctorReportsAnOlderPopupBinding(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.shellSession("work")
	h.loadPlugin()
	bindings := func() map[string]any {
		findings, _ := h.doctor()
		return findings["plugin key bindings"]
	}
	if f := bindings(); f == nil || f["ok"] != true {
		t.Fatalf("doctor after loading the plugin: %v", f)
	}
	older := "'" + qtaskBin + "' 'ui'"
	if out, err := h.tmux("bind-key", "-T", "prefix", "T", "display-popup", "-E", "-w", "90%", "-h", "70%", "-T", " qtask ", older); err != nil {
		t.Fatalf("bind-key: %v %s", err, out)
	}
	if f := bindings(); f == nil || f["ok"] != false || !strings.Contains(f["detail"].(string), "bound by an older qtask): prefix T (task menu") {
		t.Errorf("doctor with the older popup binding: %v", f)
	}
	h.loadPlugin()
	if line, _ := h.tmux("list-keys", "-T", "prefix", "T"); !strings.Contains(line, "--tmux-client") {
		t.Errorf("a reload left the older binding: %s", line)
	}
	if f := bindings(); f == nil || f["ok"] != true {
		t.Errorf("doctor after a reload: %v", f)
	}
}

// startOn starts `command` in the background on the tmux server listening
// on socket (another than the harness's: a task started outside tmux lives
// on the private `-L qtask` server) and returns the task.
func (h *harness) startOn(socket, command string, flags ...string) tasks.Task {
	h.t.Helper()
	args := append(append([]string{"run", "--bg", "--json"}, flags...), "--", command)
	r := h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET=" + socket}, args...)
	if r.code != 0 {
		h.t.Fatalf("qtask %s on %s: exit %d\n%s", strings.Join(args, " "), socket, r.code, r.stderr)
	}
	return decodeTask(h.t, r.stdout)
}

// Enter in the task menu's popup on a task of another tmux server (started
// outside tmux, it runs on the private server; the menu in the person's
// own tmux lists it) says where it runs and how to attach, and the menu
// stays open. It ran a tmux client attached to that server inside the
// popup: a tmux in a tmux, which only prefix d left, and whose prefix T
// opened a popup in the popup (found by a new user's trial).
func TestPluginMenuViewOfTaskOnAnotherServer(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	other := filepath.Join(h.root, "other.sock")
	task := h.startOn(other, "sleep 60", "--name", "elsewhere")
	c.pressPrefixKey("T")
	c.waitDrawn("elsewhere")
	mark := c.mark()
	c.typeKeys("\r")
	c.waitDrawnSince(mark, "runs on another tmux server")
	c.waitDrawnSince(mark, filepath.Base(other)+" attach`") // the line wraps at the popup's width
	otherClients := func() string {
		out, _ := exec.Command("tmux", "-S", other, "list-clients", "-F", "#{client_name}").Output()
		return strings.TrimSpace(string(out))
	}
	if clients := otherClients(); clients != "" {
		t.Fatalf("a tmux client attached to the task's server from the popup: %q", clients)
	}
	if !h.menuRunning() {
		t.Fatal("the menu closed: its line saying where the task runs went with it")
	}
	c.typeKeys("q")
	eventually(t, "the menu to exit", func() bool { return !h.menuRunning() })
	if clients := otherClients(); clients != "" {
		t.Fatalf("a tmux client attached to the task's server from the popup: %q", clients)
	}
	h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET=" + other}, "stop", task.ID)
}

// The display-menu's "View its pane" on a task of another tmux server says
// where it runs, and the client stays where it was. It switched the client
// to the pane of the same id on its own server, someone else's pane, or
// failed with tmux's "can't find pane".
func TestPluginDisplayMenuViewOfTaskOnAnotherServer(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pane := h.shellSession("work")
	h.tmux("set-option", "-g", "@qtask-menu-style", "menu")
	h.loadPlugin()
	c := h.ptyClient("work")
	other := filepath.Join(h.root, "other.sock")
	task := h.startOn(other, "sleep 60", "--name", "elsewhere")
	c.pressPrefixKey("T")
	c.waitDrawn("elsewhere")
	c.typeKeys("1")
	c.waitDrawn("View its pane")
	c.typeKeys("v")
	c.waitDrawn("qtask: task " + task.ID + " runs on another tmux server")
	if shown, _ := h.tmux("display-message", "-p", "-c", c.name, "#{pane_id}"); shown != pane {
		t.Fatalf("the client moved to pane %s (its own was %s)", shown, pane)
	}
	h.qtaskIn(h.root, []string{"QTASK_TMUX_SOCKET=" + other}, "stop", task.ID)
}

// cursorRow is the task menu's row under the cursor on rows ("" if none).
func cursorRow(rows []string) string { return rowWith(rows, "> ") }

// The task menu (prefix T) keeps its columns lined up whatever a status
// says: a monitor's `completed (exit 0, 3 events)` was wider than the
// status column and pushed its own row's runtime and name to the right.
func TestPluginMenuColumnsLineUpWithALongStatus(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	monitor := decodeTask(t, h.mustQtask("monitor", "--json", "--name", "monitor-task", "--", "printf 'a\\nb\\nc\\n'"))
	h.qtask("wait", "--timeout", "60s", monitor.ID)
	if st := h.status(monitor.ID); st.StatusText() != "completed (exit 0, 3 events)" {
		t.Fatalf("the monitor's status: %q, want completed (exit 0, 3 events)", st.StatusText())
	}
	done := h.start("true", "--name", "done-task")
	h.wait(done.ID)
	running := h.start("sleep 60", "--name", "running-task")
	c.pressPrefixKey("T")
	names := []string{"monitor-task", "done-task", "running-task"}
	rows := c.waitScreen("the three tasks", func(rows []string) bool {
		for _, name := range names {
			if rowWith(rows, name) == "" {
				return false
			}
		}
		return true
	})
	column := func(name string) int { r := rowWith(rows, name); return len([]rune(r[:strings.Index(r, name)])) }
	for _, name := range names[1:] {
		if column(name) != column(names[0]) {
			t.Fatalf("the names start in different columns (%s at %d, %s at %d):\n%s", names[0], column(names[0]), name, column(name), strings.Join(rows, "\n"))
		}
	}
	if !strings.Contains(rowWith(rows, "monitor-task"), "completed (exit 0, 3 events)") {
		t.Fatalf("the monitor's row does not show its whole status:\n%s", strings.Join(rows, "\n"))
	}
	c.typeKeys("q")
	h.mustQtask("stop", running.ID)
}

// x in the task menu removes the task under the cursor and the cursor stays
// on its row, now the next task's. It jumped to the top of the list.
func TestPluginMenuCursorStaysAfterRemove(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	var ids []string
	for _, name := range []string{"task-one", "task-two", "task-three"} {
		task := h.start("true", "--name", name)
		h.wait(task.ID)
		ids = append(ids, task.ID)
	}
	c.pressPrefixKey("T")
	c.waitScreen("the cursor on the newest task", func(rows []string) bool { return strings.Contains(cursorRow(rows), "task-three") })
	c.typeKeys("j")
	c.waitScreen("the cursor on the second task", func(rows []string) bool { return strings.Contains(cursorRow(rows), "task-two") })
	c.typeKeys("x")
	rows := c.waitScreen("task-two removed", func(rows []string) bool { return rowWith(rows, "Removed task "+ids[1]) != "" })
	if cur := cursorRow(rows); !strings.Contains(cur, "task-one") {
		t.Fatalf("after removing the second task the cursor is on %q, want the next one, task-one:\n%s", cur, strings.Join(rows, "\n"))
	}
	c.typeKeys("q")
}

// A list longer than the popup says how many tasks are below the rows it
// shows, and above once the cursor has moved down past them. The rows past
// the popup's bottom were simply not there.
func TestPluginMenuSaysHowManyMore(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	const n = 30 // the popup is 70% of 40 rows
	var ids []string
	for i := range n {
		ids = append(ids, h.start("true", "--name", fmt.Sprintf("many-%02d", i)).ID)
	}
	h.qtask(append([]string{"wait", "--timeout", "60s"}, ids...)...)
	c.pressPrefixKey("T")
	rows := c.waitScreen("a line saying how many more", func(rows []string) bool { return rowWith(rows, " more") != "" })
	shown := 0
	for _, r := range rows {
		if strings.Contains(r, "many-") {
			shown++
		}
	}
	want := fmt.Sprintf("↓ %d more", n-shown)
	if line := rowWith(rows, " more"); shown == 0 || !strings.Contains(line, want) {
		t.Fatalf("%d rows shown, and the more line is %q, want %q:\n%s", shown, line, want, strings.Join(rows, "\n"))
	}
	for range shown {
		c.typeKeys("j")
	}
	c.waitScreen("the cursor past the first screen, and tasks above it", func(rows []string) bool {
		return strings.Contains(cursorRow(rows), fmt.Sprintf("many-%02d", n-1-shown)) && rowWith(rows, "↑ 1 more") != ""
	})
	c.typeKeys("q")
}

// x on a running task asks first: any key but y keeps it, y stops it and
// removes it with its output. It was refused with "stop it first".
func TestPluginMenuForceRemovesARunningTask(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	task := h.start("sleep 60", "--name", "busy-task")
	c.pressPrefixKey("T")
	c.waitScreen("the running task", func(rows []string) bool { return strings.Contains(cursorRow(rows), "busy-task") })
	c.typeKeys("x")
	c.waitScreen("the question", func(rows []string) bool { return rowWith(rows, "task "+task.ID+" is running: y stops it") != "" })
	c.typeKeys("n")
	c.waitScreen("the task kept", func(rows []string) bool { return rowWith(rows, "task "+task.ID+" kept") != "" })
	if st := h.status(task.ID); !st.Running() {
		t.Fatalf("a key other than y: the task is %s, want it kept running", st.StatusText())
	}
	c.typeKeys("x")
	mark := c.mark()
	c.waitDrawnSince(mark, "y stops it")
	c.typeKeys("y")
	c.waitScreen("the task removed", func(rows []string) bool { return rowWith(rows, "Removed task "+task.ID) != "" })
	if r := h.qtask("status", task.ID); r.code == 0 {
		t.Fatalf("the removed task still has a status: %s", r.stdout)
	}
	if _, err := os.Stat(task.OutputPath); !os.IsNotExist(err) {
		t.Fatalf("the removed task's output is still there: %v", err)
	}
	c.typeKeys("q")
}

// Loading the plugin leaves nothing in tmux's message log: it looked up
// each key it binds with list-keys, and tmux logs "unknown key: T" for a
// key that is not bound yet (the first load, and a key moved by its
// option).
func TestPluginLoadLogsNoMessage(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	h.tmux("set-option", "-g", "@qtask-promote-key", "M-p")
	h.loadPlugin()
	c.pressPrefixKey("T")
	c.waitDrawn("q quit") // the binding works
	c.typeKeys("q")
	if log, _ := h.tmux("show-messages"); strings.Contains(log, "unknown key") {
		t.Fatalf("loading the plugin left messages in tmux's log:\n%s", log)
	}
}

// A task's window killed by hand (prefix &, y) is a stop the person asked
// for: the task is `cancelled (window killed)`, and the status segment
// counts no failure. It was `failed (lost)`, an unseen failure (✗1) on
// the status line.
func TestPluginKilledTaskWindowIsCancelled(t *testing.T) {
	t.Parallel()
	h, _, c := pluginWorld(t)
	task := h.start("sleep 600", "--name", "kill-me")
	h.wantStatus("the task running", "⏵1")
	if out, err := h.tmux("switch-client", "-c", c.name, "-t", task.PaneID); err != nil {
		t.Fatalf("switch-client: %v %s", err, out)
	}
	c.waitDrawn("kill-me")
	c.pressPrefixKey("&")
	c.waitDrawn("? (y/n)")
	c.typeKeys("y")
	eventually(t, "the task of the killed window to end", func() bool { return h.recordStatus(task.ID) != string(tasks.StatusRunning) })
	h.wantStatus("the task's window killed", "")
	st := h.status(task.ID)
	if st.Status != tasks.StatusCancelled || st.StatusText() != "cancelled (window killed)" {
		t.Fatalf("task after its window was killed: %s, want cancelled (window killed)", st.StatusText())
	}
	if row := rowWith(strings.Split(h.mustQtask("ls"), "\n"), task.ID); !strings.Contains(row, "cancelled (window killed)") {
		t.Fatalf("ls shows the task as %q, want cancelled (window killed)", row)
	}
}
