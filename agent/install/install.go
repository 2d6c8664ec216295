// Package install merges qtask's hooks into a coding agent's settings file
// and takes them out again. It never clobbers: the user's settings, hooks
// and key order stay as they were, only qtask's own entries change, a
// second install changes nothing, and uninstall removes exactly what
// install added.
package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/qtask/qtask/agent"
	"github.com/qtask/qtask/agent/hooks"
	"github.com/qtask/qtask/agent/route"
)

// flavor is how an agent's settings differ from Claude Code's.
type flavor struct {
	dir string // the settings directory, in the project and in HOME
	// msTimeouts: hook timeouts are in milliseconds, not seconds.
	msTimeouts bool
	// enableKey: hooks run only with hooksConfig.enabled set (gemini).
	enableKey bool
}

var flavors = map[string]flavor{
	"claude": {dir: ".claude"},
	"qwen":   {dir: ".qwen"},
	"gemini": {dir: ".gemini", msTimeouts: true, enableKey: true},
}

// hookTimeout bounds a hook with nothing to wait for; a Stop hook with
// --hold gets the hold on top.
const hookTimeout = 10 * time.Second

// Marks in the description of gemini entries (gemini allows one; Claude's
// schema does not, so Claude and qwen entries are known by their command
// alone). enabledMark records that install turned hooksConfig.enabled on
// where it was not set, so that uninstall takes it out again and only
// then; wasOffMark that it was false, so that uninstall sets it false
// again (gemini's default is on: taking the key out would leave the
// user's own hooks running).
const (
	description = "qtask: tell the agent when its tasks end"
	enabledMark = "; turned hooksConfig.enabled on"
	wasOffMark  = "; turned hooksConfig.enabled on from false"
)

// Paths says where settings files live.
type Paths struct {
	Cwd, Home string
	// ClaudeConfigDir replaces ~/.claude when set ($CLAUDE_CONFIG_DIR).
	ClaudeConfigDir string
}

// SettingsPath is the agent's project settings file (in Cwd) or, with user,
// its user settings file. For a Claude Code project that is
// .claude/settings.local.json, the personal project settings Claude reads
// besides the shared .claude/settings.json (which teams commit): what
// install writes names paths on this machine. Claude fires hooks from
// either file alike (measured: TestRealAgentsHearTheirTasksEnd and the
// other real-Claude tests install there).
func SettingsPath(a hooks.Agent, user bool, p Paths) (string, error) {
	dir := flavors[a.Name].dir
	switch {
	case !user && a.Name == "claude":
		return filepath.Join(p.Cwd, dir, claudeLocal), nil
	case !user:
		return filepath.Join(p.Cwd, dir, "settings.json"), nil
	case a.Name == "claude" && p.ClaudeConfigDir != "":
		return filepath.Join(p.ClaudeConfigDir, "settings.json"), nil
	case p.Home == "":
		return "", errors.New("HOME is unset or relative: cannot find the user settings; use --project")
	}
	return filepath.Join(p.Home, dir, "settings.json"), nil
}

// claudeLocal is the name of Claude Code's personal project settings file.
const claudeLocal = "settings.local.json"

// SharedSettingsPath is the project settings file that teams commit, where
// installs of Claude before settings.local.json wrote qtask's entries, so
// that install moves them out of it and uninstall looks there too; "" for
// the other agents and for user settings.
func SharedSettingsPath(a hooks.Agent, user bool, p Paths) string {
	if user || a.Name != "claude" {
		return ""
	}
	return filepath.Join(p.Cwd, flavors[a.Name].dir, "settings.json")
}

// HookCommand is the command line the agent runs for each hook: the qtask
// binary by absolute path (hooks do not always get the user's PATH),
// quoted for the shell the agent runs it with.
func HookCommand(self string, a hooks.Agent) string {
	return agent.ShellQuote(self) + " agent hook " + a.Name
}

// Add returns settings with the agent's qtask hooks merged in: one entry
// per event, running command (with --hold for the end of turn when hold is
// set; without a hold, Claude's end of turn also gets the asyncRewake
// waiter). Entries of qtask's for the agent that differ (an older binary path,
// another hold) are replaced; everything else is left as it was.
func Add(a hooks.Agent, settings []byte, command string, hold time.Duration) ([]byte, error) {
	root, hooksObj, err := parseSettings(settings, true)
	if err != nil {
		return nil, err
	}
	fl := flavors[a.Name]
	mark, changed := "", false
	if fl.enableKey {
		hc, err := root.child("hooksConfig", true)
		if err != nil {
			return nil, err
		}
		mark = markIn(hooksObj, a)
		if on, had := hc.get("enabled"); on != true {
			hc.set("enabled", true)
			mark, changed = enabledMark, true
			if had && on == false {
				mark = wasOffMark
			}
		}
	}
	for _, ev := range a.Events() {
		want := []*object{entry(a, ev, command, hold, mark)}
		// The waiter is for sessions that outlive their turn; a hold is
		// for headless runs, whose end-of-turn hook does the waiting. Both
		// at once would race for the same notification at every end of
		// turn, and a headless run ends the waiter with it: whatever the
		// waiter took would be told to no one.
		if a.AsyncRewake && ev == a.StopEvent() && hold == 0 {
			want = append(want, rewakeEntry(command))
		}
		merged, err := merge(hooksObj, a, ev, "", want...)
		if err != nil {
			return nil, err
		}
		changed = changed || merged
	}
	if !changed {
		return settings, nil // as it was, formatting and all
	}
	return encode(root), nil
}

// merge puts want in event's list as qtask's entries for a, in a group of
// their own (with matcher, when not empty), unless they are there already
// under that matcher; it reports whether it changed anything.
func merge(hooksObj *object, a hooks.Agent, event, matcher string, want ...*object) (bool, error) {
	groups, err := groupsOf(hooksObj, event)
	if err != nil {
		return false, err
	}
	ours := oursIn(groups, a)
	list := make([]any, len(want))
	for i, w := range want {
		list[i] = w
	}
	if len(ours) == len(want) && bytes.Equal(encode(ours), encode(list)) && matcherOf(groups, a) == matcher {
		return false, nil
	}
	groups, _ = withoutOurs(groups, a)
	group := newObject()
	if matcher != "" {
		group.set("matcher", matcher)
	}
	group.set("hooks", list)
	hooksObj.set(event, append(groups, group))
	return true, nil
}

// AddRoute returns settings with the agent's routing hook merged in (see
// hooks.Agent.Route), for its shell tool and the tool that stops its
// background calls only (an older install's, for the shell tool alone,
// is replaced); settings of an agent without one, or that have it
// already, come back unchanged.
func AddRoute(a hooks.Agent, settings []byte, command string) ([]byte, error) {
	return addToolHook(a, a.RouteEvent(), settings, command)
}

// AddGuard returns settings with the agent's guard on its shell tool's own
// background option merged in (see hooks.Agent.Guard); settings of an
// agent without one (Claude), or that have it already, come back
// unchanged.
func AddGuard(a hooks.Agent, settings []byte, command string) ([]byte, error) {
	return addToolHook(a, a.GuardEvent(), settings, command)
}

// addToolHook merges qtask's hook for ev, matching the agent's shell tool
// only, into settings; "" for ev adds nothing.
func addToolHook(a hooks.Agent, ev string, settings []byte, command string) ([]byte, error) {
	if ev == "" {
		return settings, nil
	}
	root, hooksObj, err := parseSettings(settings, true)
	if err != nil {
		return nil, err
	}
	changed, err := merge(hooksObj, a, ev, a.RouteMatcher(), entry(a, ev, command, 0, markIn(hooksObj, a)))
	if err != nil || !changed {
		return settings, err
	}
	return encode(root), nil
}

// Remove returns settings without the agent's qtask hooks, and without
// whatever Add created for them alone: a group or an event left empty,
// an empty "hooks", and hooksConfig.enabled if Add turned it on (false
// again if it was false before). (An
// empty "hooks" or event list that was there before Add is the one thing
// it cannot tell from one Add created: it goes too.) Settings without
// qtask's hooks come back unchanged, byte for byte.
func Remove(a hooks.Agent, settings []byte) ([]byte, error) {
	root, hooksObj, err := parseSettings(settings, false)
	if err != nil || hooksObj == nil {
		return settings, err
	}
	mark := markIn(hooksObj, a)
	if !dropOurs(hooksObj, a, append([]string{}, hooksObj.keys...)) {
		return settings, nil // as it was, formatting and all
	}
	if len(hooksObj.keys) == 0 {
		root.del("hooks")
	}
	restoreEnabled(root, mark)
	return encode(root), nil
}

// RemoveRoute returns settings without the agent's routing hook, for an
// install with routing off over one with it on; RemoveGuard without its
// guard on the shell tool's own background option, for an install with
// --allow-own-background. Settings without it come back unchanged, byte
// for byte.
func RemoveRoute(a hooks.Agent, settings []byte) ([]byte, error) {
	return removeToolHook(a, a.RouteEvent(), settings)
}

// RemoveGuard: see RemoveRoute.
func RemoveGuard(a hooks.Agent, settings []byte) ([]byte, error) {
	return removeToolHook(a, a.GuardEvent(), settings)
}

// removeToolHook takes qtask's hook for ev out of settings.
func removeToolHook(a hooks.Agent, ev string, settings []byte) ([]byte, error) {
	if ev == "" {
		return settings, nil
	}
	root, hooksObj, err := parseSettings(settings, false)
	if err != nil || hooksObj == nil || !dropOurs(hooksObj, a, []string{ev}) {
		return settings, err
	}
	return encode(root), nil
}

// dropOurs takes qtask's entries for a out of the given events of
// hooksObj, and an event left empty by that; it reports whether it took
// any.
func dropOurs(hooksObj *object, a hooks.Agent, events []string) bool {
	removedAny := false
	for _, ev := range events {
		groups, err := groupsOf(hooksObj, ev)
		if err != nil {
			continue // not a list of groups: nothing of qtask's is in it
		}
		kept, removed := withoutOurs(groups, a)
		removedAny = removedAny || removed
		switch {
		case !removed:
		case len(kept) == 0:
			hooksObj.del(ev)
		default:
			hooksObj.set(ev, kept)
		}
	}
	return removedAny
}

// restoreEnabled puts hooksConfig.enabled back as it was before the
// install that left mark.
func restoreEnabled(root *object, mark string) {
	hc, _ := root.child("hooksConfig", false)
	switch {
	case hc == nil || mark == "":
	case mark == wasOffMark:
		hc.set("enabled", false)
	default:
		hc.del("enabled")
		if len(hc.keys) == 0 {
			root.del("hooksConfig")
		}
	}
}

// parseSettings parses a settings file and finds its "hooks" object
// (creating it if create).
func parseSettings(settings []byte, create bool) (root, hooksObj *object, err error) {
	root, err = parseObject(settings)
	if err != nil {
		return nil, nil, fmt.Errorf("not a JSON object qtask can rewrite (%w)", err)
	}
	hooksObj, err = root.child("hooks", create)
	return root, hooksObj, err
}

// entry is qtask's hook entry for one event.
func entry(a hooks.Agent, event, command string, hold time.Duration, mark string) *object {
	fl := flavors[a.Name]
	timeout := hookTimeout
	if a.Classify(event) == hooks.EndOfTurn && hold > 0 {
		command += " --hold " + hold.String()
		timeout += hold
	}
	e := newObject()
	if fl.enableKey {
		e.set("name", "qtask")
	}
	e.set("type", "command")
	e.set("command", command)
	n := int64(timeout / time.Second)
	if fl.msTimeouts {
		n = timeout.Milliseconds()
	}
	e.set("timeout", jsonNumber(n))
	if fl.enableKey {
		e.set("description", description+mark)
	}
	return e
}

// rewakeTimeout is Claude's timeout for the asyncRewake waiter (an hour),
// and rewakeWait how long the waiter waits: a little less, so that it
// ends on its own rather than being killed with a notification in hand.
const (
	rewakeTimeout = time.Hour
	rewakeWait    = rewakeTimeout - time.Minute
)

// rewakeEntry is the asyncRewake waiter armed at each end of Claude's turn
// (hooks.Agent.Rewake): it wakes an idle agent when a task ends.
func rewakeEntry(command string) *object {
	e := newObject()
	e.set("type", "command")
	e.set("command", command+" --rewake "+rewakeWait.String())
	e.set("timeout", jsonNumber(int64(rewakeTimeout/time.Second)))
	e.set("async", true)
	e.set("asyncRewake", true)
	return e
}

func jsonNumber(n int64) any { return json.Number(strconv.FormatInt(n, 10)) }

// groupsOf is the event's list of matcher groups.
func groupsOf(hooksObj *object, event string) ([]any, error) {
	v, ok := hooksObj.get(event)
	if !ok {
		return nil, nil
	}
	groups, isList := v.([]any)
	if !isList {
		return nil, fmt.Errorf("hooks.%s is not a list", event)
	}
	return groups, nil
}

// hookList is a group's "hooks" list, or nil when the group has none.
func hookList(group any) []any {
	g, ok := group.(*object)
	if !ok {
		return nil
	}
	v, _ := g.get("hooks")
	list, _ := v.([]any)
	return list
}

// isOurs reports whether a hook entry is qtask's for agent a: it runs a
// qtask binary as `… agent hook NAME`.
func isOurs(h any, a hooks.Agent) bool {
	e, ok := h.(*object)
	if !ok {
		return false
	}
	v, _ := e.get("command")
	command, _ := v.(string)
	bin, rest := firstWord(command)
	fields := strings.Fields(rest)
	if len(fields) < 3 || fields[0] != "agent" || fields[1] != "hook" || fields[2] != a.Name {
		return false
	}
	return strings.HasPrefix(filepath.Base(bin), "qtask")
}

// firstWord splits a shell command line after its first word, unquoting
// that word as the shell would (quotes and backslashes).
func firstWord(s string) (word, rest string) {
	var b strings.Builder
	s = strings.TrimLeft(s, " \t")
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == ' ' || c == '\t':
			return b.String(), s[i:]
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return b.String() + s[i+1:], ""
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), ""
}

// matcherOf is the matcher of the first group among groups that holds a
// qtask entry for a ("" for none, or a group without one).
func matcherOf(groups []any, a hooks.Agent) string {
	for _, g := range groups {
		for _, h := range hookList(g) {
			if isOurs(h, a) {
				v, _ := g.(*object).get("matcher")
				m, _ := v.(string)
				return m
			}
		}
	}
	return ""
}

// oursIn lists qtask's entries for a among groups.
func oursIn(groups []any, a hooks.Agent) []any {
	var ours []any
	for _, g := range groups {
		for _, h := range hookList(g) {
			if isOurs(h, a) {
				ours = append(ours, h)
			}
		}
	}
	return ours
}

// markIn is the mark in qtask's entries for a that says install turned
// hooksConfig.enabled on (and from what), "" if none does.
func markIn(hooksObj *object, a hooks.Agent) string {
	if hooksObj == nil {
		return ""
	}
	for _, ev := range hooksObj.keys {
		groups, _ := groupsOf(hooksObj, ev)
		for _, h := range oursIn(groups, a) {
			v, _ := h.(*object).get("description")
			d, _ := v.(string)
			for _, mark := range []string{enabledMark, wasOffMark} {
				if strings.HasSuffix(d, mark) {
					return mark
				}
			}
		}
	}
	return ""
}

// withoutOurs drops qtask's entries for a from groups, and a group left
// with no hooks by that; it reports whether it dropped anything.
func withoutOurs(groups []any, a hooks.Agent) ([]any, bool) {
	var kept []any
	removed := false
	for _, g := range groups {
		list := hookList(g)
		var rest []any
		for _, h := range list {
			if isOurs(h, a) {
				removed = true
				continue
			}
			rest = append(rest, h)
		}
		switch {
		case len(rest) == len(list):
			kept = append(kept, g)
		case len(rest) > 0:
			g.(*object).set("hooks", rest)
			kept = append(kept, g)
		}
	}
	return kept, removed
}

// Read reads a settings file; a missing one is empty. A symlink is
// refused: the file is replaced by rename, which would cut the link.
func Read(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return nil, fmt.Errorf("%s is a symlink, and qtask does not write through one: "+
			"add the hooks by hand (--dry-run in a directory without a settings file prints them) "+
			"or run install where the file is real", path)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return io.ReadAll(io.LimitReader(f, 16<<20))
}

// backupSuffix names the copy install keeps of a file as it was before
// qtask (see Change.Apply).
const backupSuffix = ".qtask-backup"

// Write replaces the file at path with data, atomically. Directories it
// creates are 0755 (a project's .claude is shared with its repository),
// the file keeps its mode (0644 when new).
func Write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, data, modeOf(path))
}

// modeOf is the permissions of the file at path, 0644 when there is none.
func modeOf(path string) fs.FileMode {
	if fi, err := os.Lstat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}

// writeAtomic writes a temp file beside path (O_EXCL: never through a
// link) and renames it into place.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Change is what an install or uninstall does to one settings file.
type Change struct {
	Path     string
	Old, New []byte // nil when the file does not exist (New: uninstall deletes it)
	// What the file gets or loses: "hooks", "MCP server", or both.
	What string
	// Shared: the change takes qtask's entries out of the shared project
	// settings (SharedSettingsPath), whatever the command; it has nothing
	// to say when there were none.
	Shared bool
	// HadOurs: Old holds entries of qtask's already (an earlier install's).
	HadOurs bool
	// Note: a line for the user about the file as installed, "" if none.
	Note string
	// Undo is set by Uninstalling: the change takes an install back.
	Undo Undo
}

// Undo is how an uninstall takes an install out of a file.
type Undo int

const (
	// NotUndo: an install's change (or the shared file's cleaning).
	NotUndo Undo = iota
	// Merge: qtask's entries are taken out, the rest kept as it is now;
	// the backup, if any, stays (the file changed since install).
	Merge
	// Restore: the file is the backup's text again, byte for byte, and
	// the backup goes.
	Restore
	// Delete: install created the file, which held nothing else: it goes.
	Delete
)

// Setup is what an install sets up besides the hooks every install adds.
type Setup struct {
	// Hold: the end-of-turn hook waits up to this long for running tasks.
	Hold time.Duration
	// Routed: Claude's shell tool runs its commands as tasks (taken out
	// when false).
	Routed bool
	// OwnBackground: qwen's and gemini's shell tools keep their own
	// background option; when false, a call asking for it is denied with
	// the qtask line to run instead (see hooks.Agent.Guard).
	OwnBackground bool
	// Env: variables for the agent's settings' env (Claude).
	Env []EnvVar
}

// PlanAdd reads the settings file at path and works out the install (the
// hooks, the routing hook or the background guard as s says, taken out
// when it says not, and env when not empty); PlanRemove the uninstall.
// Nothing is written.
func PlanAdd(a hooks.Agent, path, command string, s Setup) (Change, error) {
	return plan(a, path, func(old []byte) ([]byte, error) {
		added, err := Add(a, old, command, s.Hold)
		if err == nil && s.Routed {
			added, err = AddRoute(a, added, command)
		} else if err == nil {
			added, err = unroute(a, added)
		}
		if err == nil && !s.OwnBackground {
			added, err = AddGuard(a, added, command)
		} else if err == nil {
			added, err = RemoveGuard(a, added)
		}
		if err != nil || len(s.Env) == 0 {
			return added, err
		}
		return AddEnv(added, s.Env)
	})
}

// unroute takes out the routing an earlier install set up (its hook and,
// for Claude, the shell prefix), so that installing with routing off turns
// it off.
func unroute(a hooks.Agent, settings []byte) ([]byte, error) {
	settings, err := RemoveRoute(a, settings)
	if err != nil || a.Name != hooks.Claude.Name {
		return settings, err
	}
	return removeEnv(settings, func(name string) bool { return name == ShellPrefixVar })
}

// PlanRemove: see PlanAdd. For Claude, the env entries install sets go too.
func PlanRemove(a hooks.Agent, path string) (Change, error) {
	return plan(a, path, func(old []byte) ([]byte, error) {
		removed, err := Remove(a, old)
		if err != nil || a.Name != hooks.Claude.Name {
			return removed, err
		}
		return RemoveEnv(removed)
	})
}

// PlanRemoveShared is the change that takes qtask's entries (hooks, env)
// for a out of the shared project settings, for install (they belong in
// the local file: left in both, every hook would run twice) and uninstall
// alike; ok is false when the agent has no such file. env is what the
// install sets in the local file: a value of the user's own for one of
// them in the shared file is refused as it would be in the local file,
// since Claude lets the local file override it without a word.
func PlanRemoveShared(a hooks.Agent, user bool, p Paths, env []EnvVar) (c Change, ok bool, err error) {
	path := SharedSettingsPath(a, user, p)
	if path == "" {
		return Change{}, false, nil
	}
	c, err = PlanRemove(a, path)
	if err != nil {
		// A file qtask cannot rewrite (a symlink, comments) is the user's
		// business as long as nothing of qtask's is in it.
		data, rerr := os.ReadFile(path)
		if rerr != nil || mentionsQtask(data, a) {
			return Change{}, false, err
		}
		return Change{Path: path, Old: data, New: data, What: "hooks", Shared: true}, true, nil
	}
	if len(env) > 0 {
		if _, err = AddEnv(c.New, env); err != nil {
			err = fmt.Errorf("%s: %w", path, err)
		}
	}
	c.What, c.Shared = "hooks", true
	return c, err == nil, err
}

// mentionsQtask reports whether a settings file's text names qtask's hook
// command for a or Claude's shell prefix link.
func mentionsQtask(data []byte, a hooks.Agent) bool {
	return bytes.Contains(data, []byte(" agent hook "+a.Name)) || bytes.Contains(data, []byte(route.ClaudeShellLink))
}

// plan reads the file at path and works out its change by edit, noting
// whether it holds entries of qtask's for a already.
func plan(a hooks.Agent, path string, edit func([]byte) ([]byte, error)) (Change, error) {
	old, err := Read(path)
	if err != nil {
		return Change{}, err
	}
	updated, err := edit(old)
	if err != nil {
		return Change{}, fmt.Errorf("%s: %w; fix the file or edit it by hand", path, err)
	}
	return Change{Path: path, Old: old, New: updated, HadOurs: holdsOurs(a, old)}, nil
}

// holdsOurs reports whether a settings file holds anything install writes
// for a (hooks, env, the MCP server).
func holdsOurs(a hooks.Agent, data []byte) bool {
	for _, remove := range []func([]byte) ([]byte, error){
		func(d []byte) ([]byte, error) { return Remove(a, d) }, RemoveEnv, RemoveMCP,
	} {
		if out, err := remove(data); err == nil && !bytes.Equal(out, data) {
			return true
		}
	}
	return false
}

// Uninstalling is c, an uninstall's planned change (PlanRemove's,
// PlanRemoveMCP's), as uninstall makes it: when what is left once
// qtask's entries are out is, as JSON, the file as it was before install
// (its backup), the file gets the backup's very bytes back, whatever its
// formatting; when no backup exists and nothing is left, install created
// the file and it is deleted; otherwise the file changed since install
// and is merged, keeping its backup. Comparing the result rather than
// remembering what install wrote needs no state beside the file, and
// restores exactly when the merge would have given the same settings.
func (c Change) Uninstalling() (Change, error) {
	if bytes.Equal(c.Old, c.New) {
		return c, nil // nothing of qtask's in it: nothing to undo
	}
	c.Undo = Merge
	backup, err := Read(c.Path + backupSuffix)
	if err != nil {
		return c, err
	}
	switch {
	case backup != nil && sameSettings(backup, c.New):
		c.New, c.Undo = backup, Restore
	case backup == nil && sameSettings(nil, c.New):
		c.New, c.Undo = nil, Delete
	case backup != nil:
		c.Note = c.Path + " changed since install: qtask's entries are taken out of it and the rest kept; as it was before install: " + c.Path + backupSuffix
	}
	return c, nil
}

// sameSettings reports whether a and b are the same settings (an empty or
// missing file being {}), key order included.
func sameSettings(a, b []byte) bool {
	x, errA := parseObject(a)
	y, errB := parseObject(b)
	return errA == nil && errB == nil && bytes.Equal(encode(x), encode(y))
}

// Diff is the change as a unified diff, "" when there is none.
func (c Change) Diff() string { return Diff(c.Path, c.Old, c.New) }

// Apply writes the change and returns what to tell the user about it in
// a few words ("" when nothing). The file's text before qtask is kept in
// PATH.qtask-backup: an install writes it when the file held nothing of
// qtask's, and leaves it (or its absence: the file was not there) alone
// when it did (a second install over the first), so that the backup never
// holds an installed version; an uninstall never writes one (see
// Uninstalling for what it does). The shared file an older install wrote
// into is backed up as it is (see PlanRemoveShared).
func (c Change) Apply() (string, error) {
	backup := c.Path + backupSuffix
	switch c.Undo {
	case Delete:
		return "install had created it: deleted", os.Remove(c.Path)
	case Restore:
		if err := Write(c.Path, c.New); err != nil {
			return "", err
		}
		return "as it was before install", os.Remove(backup)
	case Merge:
		return "", Write(c.Path, c.New)
	}
	note := ""
	if c.Old != nil && (c.Shared || !c.HadOurs) {
		if err := writeAtomic(backup, c.Old, modeOf(c.Path)); err != nil {
			return "", fmt.Errorf("back up %s: %w", c.Path, err)
		}
		note = "previous version: " + backup
	}
	return note, Write(c.Path, c.New)
}
