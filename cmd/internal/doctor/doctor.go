// Package doctor checks what qtask needs from the machine it runs on and
// says, for each problem, how to fix it: tmux and its server, the plugin's
// key bindings, the state directory, the config file, the locale, and a
// tmux server living in a service's cgroup (killed with the service).
package doctor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/qtask/qtask/config"
	"github.com/qtask/qtask/shellhooks"
	"github.com/qtask/qtask/tasks"
	"github.com/qtask/qtask/tasks/statefs"
	"github.com/qtask/qtask/tmux"
	"github.com/qtask/qtask/tmux/plugin"
)

// Finding is the result of one check. Fix is empty when OK.
type Finding struct {
	Check  string `json:"check"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Inputs are what the checks look at.
type Inputs struct {
	Server tmux.Server
	Env    config.Env
}

// minTmuxMajor.minTmuxMinor is the oldest tmux qtask supports (display-popup, -u behaviour).
const minTmuxMajor, minTmuxMinor = 3, 2

// Run runs every check, in an order where a failure explains the ones
// after it (no tmux, no server, no bindings).
func Run(ctx context.Context, in Inputs) []Finding {
	var out []Finding
	tmuxOK, f := checkTmux(ctx)
	out = append(out, f)
	if tmuxOK {
		// qtask's own server however it is reached: by name, or by a
		// QTASK_TMUX_SOCKET or $TMUX naming its socket.
		own := in.Server.Same(tmux.SelectServer("", "", in.Env.TmuxTmpdir))
		var here tmux.PaneID // the pane doctor runs in, if on that server
		if caller := tasks.CallerAt(in.Env.TmuxSocketFromTMUX(), in.Env.TmuxPane); caller.On(in.Server) {
			here = caller.Pane
		}
		out = append(out, checkServer(ctx, in.Server, in.Env.StateDir, own, here)...)
	}
	out = append(out, checkState(in.Env))
	if f, ok := checkTasksElsewhere(ctx, in.Env, in.Server); ok {
		out = append(out, f)
	}
	out = append(out, checkConfig(in.Env.ConfigPath), checkLocale(in.Env.Locale))
	return out
}

// Healthy reports whether no check failed.
func Healthy(fs []Finding) bool {
	for _, f := range fs {
		if !f.OK {
			return false
		}
	}
	return true
}

func checkTmux(ctx context.Context) (bool, Finding) {
	f := Finding{Check: "tmux"}
	v, err := tmux.Version(ctx)
	if err != nil {
		f.Detail, f.Fix = err.Error(), "install tmux 3.2 or newer (apt-get install tmux, brew install tmux)"
		return false, f
	}
	f.Detail = v
	if !tmux.VersionAtLeast(v, minTmuxMajor, minTmuxMinor) {
		f.Fix = fmt.Sprintf("upgrade tmux to %d.%d or newer", minTmuxMajor, minTmuxMinor)
		return true, f
	}
	f.OK = true
	return true, f
}

// checkServer looks at the tmux server qtask would use: reachable, the
// plugin's bindings and hooks, the shells' hooks, and the cgroup it lives
// in.
func checkServer(ctx context.Context, server tmux.Server, stateDir string, own bool, here tmux.PaneID) []Finding {
	f := Finding{Check: "tmux server", OK: true}
	pid, err := server.PID(ctx)
	if errors.Is(err, tmux.ErrNoServer) {
		f.Detail = fmt.Sprintf("none running on %s yet; qtask starts one with the first task", server)
		return []Finding{f}
	}
	if err != nil {
		f.OK, f.Detail = false, err.Error()
		f.Fix = "check QTASK_TMUX_SOCKET / $TMUX, or run `tmux " + strings.Join(server.Args(), " ") + " kill-server` if it hangs"
		return []Finding{f}
	}
	f.Detail = fmt.Sprintf("%s, pid %d", server, pid)
	return []Finding{f, checkBindings(ctx, server, own), checkShellHooks(ctx, server, stateDir, here), checkCgroup(pid)}
}

// checkShellHooks says which shell panes have qtask's hooks loaded: the
// promote key can move a command typed there only if they have. They are
// optional, so this is never a failure; the detail says how to add them.
// here is the pane doctor runs in ("" if none on server): tmux names
// qtask as its command, and it counts as the shell doctor was started
// from.
func checkShellHooks(ctx context.Context, server tmux.Server, stateDir string, here tmux.PaneID) Finding {
	f := Finding{Check: "shell hooks", OK: true}
	panes, err := server.PaneCommands(ctx)
	if err != nil {
		f.Detail = "unknown (" + err.Error() + ")"
		return f
	}
	shells, hooked := 0, 0
	var without, adds []string
	for pane, command := range panes {
		if pane == here && shellhooks.HowToLoad(command) == "" {
			command = parentCommand()
		}
		load := shellhooks.HowToLoad(command)
		if load == "" {
			continue
		}
		shells++
		if shellhooks.Hooked(stateDir, pane) {
			hooked++
			continue
		}
		without = append(without, string(pane)+" "+command)
		if !slices.Contains(adds, load) {
			adds = append(adds, load)
		}
	}
	slices.Sort(without)
	slices.Sort(adds)
	f.Detail = fmt.Sprintf("loaded in %d of %d shell panes", hooked, shells)
	if len(without) > 0 {
		f.Detail += fmt.Sprintf(" (not in %s); to promote a command typed there, add %s",
			strings.Join(without, ", "), strings.Join(adds, "; "))
	}
	return f
}

// parentCommand names the program that started doctor ("bash"), "" if
// unknown.
func parentCommand() string {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", os.Getppid()))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(comm))
}

// checkTasksElsewhere says when running tasks live on other tmux servers
// than server (started outside tmux, on qtask's own `tmux -L qtask`, or
// from another server): their windows, keys and messages are there, not
// on this one. Never a failure; ok is false when there is nothing to say
// (no such task, or no state to read: checkState reports that).
func checkTasksElsewhere(ctx context.Context, env config.Env, server tmux.Server) (Finding, bool) {
	store, err := tasks.OpenStoreIn(env.StateDir, statefs.Home{Dir: env.StateHome, Var: env.StateHomeVar})
	if err != nil {
		return Finding{}, false
	}
	running, _, err := store.List(ctx, tasks.Filter{Status: tasks.StatusRunning})
	if err != nil {
		return Finding{}, false
	}
	counts := map[string]int{}
	var servers []string
	total := 0
	for _, t := range running {
		on, err := store.ServerOf(t)
		if err != nil || on.Same(server) {
			continue
		}
		name := strings.Join(on.Args(), " ")
		if counts[name] == 0 {
			servers = append(servers, name)
		}
		counts[name]++
		total++
	}
	if total == 0 {
		return Finding{}, false
	}
	slices.Sort(servers)
	var where []string
	for _, name := range servers {
		where = append(where, fmt.Sprintf("%d on tmux %s", counts[name], name))
	}
	noun := "tasks run"
	if total == 1 {
		noun = "task runs"
	}
	return Finding{Check: "tasks on other servers", OK: true, Detail: fmt.Sprintf(
		"%d running %s on another tmux server than this one (%s): their windows, keys and end messages are there; see them with `tmux %s attach`",
		total, noun, strings.Join(where, ", "), servers[0])}, true
}

// checkBindings looks for the plugin's keys and tmux hooks. On qtask's own
// server (own: `tmux -L qtask`, started with the first task when qtask runs
// outside tmux) their absence is no failure: that server reads only
// ~/.tmux.conf, a new user has not loaded the plugin there, and nobody
// presses keys in it until they attach; doctor says how to have them.
func checkBindings(ctx context.Context, server tmux.Server, own bool) Finding {
	f := Finding{Check: "plugin key bindings"}
	missing, err := plugin.Missing(ctx, server)
	if err != nil {
		f.Detail = err.Error()
		return f
	}
	hooks, err := plugin.MissingHooks(ctx, server)
	if err != nil {
		f.Detail = err.Error()
		return f
	}
	if len(missing) == 0 && len(hooks) == 0 {
		f.OK, f.Detail = true, "bound"
		return f
	}
	var problems []string
	if len(missing) > 0 {
		var keys []string
		for _, b := range missing {
			keys = append(keys, fmt.Sprintf("prefix %s (%s, %s)", b.Key, b.What, b.Option))
		}
		problems = append(problems, "not bound (or bound by an older qtask): "+strings.Join(keys, ", "))
	}
	if len(hooks) > 0 {
		problems = append(problems, "tmux hooks without qtask (a killed task pane is noticed late): "+strings.Join(hooks, ", "))
	}
	f.Detail = strings.Join(problems, "; ")
	const load = "load the plugin: `run-shell /path/to/qtask/scripts/qtask.tmux` in ~/.tmux.conf (or TPM)"
	if own {
		f.OK = true
		f.Detail = "qtask's own server: " + f.Detail + "; `qtask init tmux` binds them until it exits, the plugin in ~/.tmux.conf for good"
		return f
	}
	f.Fix = load + ", or run `qtask init tmux` inside tmux"
	return f
}

// checkCgroup catches the tmux server that was started from a service
// (a terminal emulator's unit, an IDE, a CI job): systemd kills everything
// in the service's cgroup when it stops or restarts, tasks included.
func checkCgroup(pid int) Finding {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return Finding{Check: "tmux server cgroup", OK: true, Detail: "unknown (" + err.Error() + ")"}
	}
	return cgroupFinding(string(data))
}

// cgroupFinding judges the server's /proc/PID/cgroup.
func cgroupFinding(data string) Finding {
	f := Finding{Check: "tmux server cgroup", OK: true}
	path := ""
	for _, line := range strings.Split(strings.TrimSpace(data), "\n") {
		if parts := strings.SplitN(line, ":", 3); len(parts) == 3 && parts[2] != "" {
			path = parts[2]
		}
	}
	f.Detail = path
	last := path[strings.LastIndex(path, "/")+1:]
	if strings.HasSuffix(last, ".service") && !strings.HasPrefix(last, "user@") {
		f.OK = false
		f.Fix = "the server dies when " + last + " restarts or stops, and every task with it: start tmux from a login shell, or as its own scope (`systemd-run --user --scope tmux`)"
	}
	return f
}

func checkState(env config.Env) Finding {
	f := Finding{Check: "state directory", Detail: env.StateDir}
	if _, err := tasks.OpenStoreIn(env.StateDir, statefs.Home{Dir: env.StateHome, Var: env.StateHomeVar}); err != nil {
		f.Detail, f.Fix = err.Error(), "see the error: chmod 700 / chown the directory, or set QTASK_STATE_DIR"
		return f
	}
	f.OK = true
	return f
}

func checkConfig(path string) Finding {
	f := Finding{Check: "config", Detail: path}
	_, exists, err := config.Load(path)
	switch {
	case err != nil:
		f.Detail, f.Fix = err.Error(), "fix the file (`qtask config check` validates it), or point QTASK_CONFIG elsewhere"
		return f
	case !exists:
		f.Detail = "none (defaults); would be read from " + path
	}
	f.OK = true
	return f
}

func checkLocale(locale string) Finding {
	f := Finding{Check: "locale", Detail: locale}
	if locale == "" {
		f.Detail = "none set (C)"
	}
	l := strings.ToLower(locale)
	if strings.Contains(l, "utf-8") || strings.Contains(l, "utf8") {
		f.OK = true
		return f
	}
	f.Fix = "set LANG=C.UTF-8 (or another UTF-8 locale) for your shell and tmux: without it a tmux client shows ⏵ ✗ ✓ and other non-ASCII text as _ (qtask's own tmux calls are unaffected)"
	return f
}
