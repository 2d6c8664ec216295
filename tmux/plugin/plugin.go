// Package plugin is qtask's side of its tmux plugin: scripts/qtask.tmux only
// finds the binary and runs `qtask init tmux`, which reads the user's
// @qtask-* options and binds qtask's keys here, and adds its hooks to the
// ones that fire when a pane closes. Everything a tmux user can tune is a
// user option, read with its default; the plugin sets no option but its
// own (@qtask-bound-keys, @qtask_status) and never touches status-left or
// status-right.
package plugin

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/qtask/qtask/tmux"
)

// The options the plugin reads, and the one it keeps for itself.
const (
	OptPromoteKey = "@qtask-promote-key"
	OptMenuKey    = "@qtask-menu-key"
	OptMenuStyle  = "@qtask-menu-style"
	// optBoundKeys remembers which prefix keys the last load bound, so a
	// reload after the user changed a key frees the old one.
	optBoundKeys = "@qtask-bound-keys"
)

// The default keys, after the prefix: tmux already owns C-b.
const (
	DefaultPromoteKey = "B"
	DefaultMenuKey    = "T"
)

// Binding is one prefix key the plugin binds.
type Binding struct {
	Key    string
	Option string   // the user option that chooses Key
	Args   []string // the tmux command the key runs
	// Marker is the part of the binding, as list-keys shows it, that is
	// the same whichever qtask binary it runs: how doctor recognises it.
	Marker string
	// Current, if set, is a part that only a binding as this qtask makes
	// it has: one an older qtask made (recognised by Marker, and replaced
	// by a reload) lacks it, and doctor reports it.
	Current string
	What    string // for doctor and errors: "promote"
}

// How the menu key shows the tasks.
const (
	MenuPopup = "popup" // qtask ui, full screen in a display-popup
	MenuTmux  = "menu"  // tmux's own display-menu, filled by qtask _menu
)

// MenuStyle decides how the menu key shows the tasks: as option says
// ("popup" or "menu"), else in a popup where tmux has display-popup (3.2
// and later) and in a display-menu before. version is what `tmux -V`
// prints ("tmux 3.1c", "tmux next-3.4", "tmux master"); one without a
// readable number is taken for a recent tmux.
func MenuStyle(option, version string) string {
	switch option = strings.TrimSpace(option); option {
	case MenuPopup, MenuTmux:
		return option
	}
	if !tmux.VersionAtLeast(version, 3, 2) {
		return MenuTmux
	}
	return MenuPopup
}

// Bindings are the keys for options (user option name → value, "" unset),
// running the qtask at bin on a tmux of version (`tmux -V`). Each command
// prints nothing and exits 0 (it reports through display-message), so
// pressing a key never opens view mode in the pane.
func Bindings(bin string, options map[string]string, version string) []Binding {
	key := func(opt, def string) string {
		if v := strings.TrimSpace(options[opt]); v != "" {
			return v
		}
		return def
	}
	// run-shell has no $TMUX_PANE: the pane and the client come as formats.
	const promoteArgs = " --tmux-client '#{client_name}' --pane '#{pane_id}'"
	promote := tmux.ShellCommand([]string{bin, "promote"}) + promoteArgs
	// The menu is qtask's own full-screen program in a popup that closes
	// when it exits; before popups, tmux's own menu of the tasks. A popup
	// cannot tell which client it is on, and display-popup expands no
	// formats in its command, so run-shell -C expands the client's name
	// into the display-popup command it runs (tmux 3.2, as popups).
	const uiArgs = " --tmux-client '#{client_name}'"
	popup := "display-popup -E -w 90% -h 70% -T ' qtask ' " + tmux.CommandArg(tmux.ShellCommand([]string{bin, "ui"})+uiArgs)
	menu := Binding{Key: key(OptMenuKey, DefaultMenuKey), Option: OptMenuKey, What: "task menu",
		Args:   []string{"run-shell", "-C", popup},
		Marker: "'ui'", Current: "--tmux-client"}
	if MenuStyle(options[OptMenuStyle], version) == MenuTmux {
		const menuArgs = " --tmux-client '#{client_name}'"
		menu.Args = []string{"run-shell", "-b", tmux.ShellCommand([]string{bin, "_menu"}) + menuArgs}
		menu.Marker, menu.Current = "'_menu'"+menuArgs, ""
	}
	return []Binding{
		{Key: key(OptPromoteKey, DefaultPromoteKey), Option: OptPromoteKey, What: "promote",
			Args: []string{"run-shell", "-b", promote}, Marker: "'promote'" + promoteArgs},
		menu,
	}
}

// ReadOptions reads the plugin's user options from the server.
func ReadOptions(ctx context.Context, server tmux.Server) (map[string]string, error) {
	options := map[string]string{}
	for _, name := range []string{OptPromoteKey, OptMenuKey, OptMenuStyle} {
		v, err := server.GlobalOption(ctx, name)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		options[name] = v
	}
	return options, nil
}

// Install binds qtask's keys per the user's options. Loading it again
// binds the same keys to the same commands, so it changes nothing; a key
// the previous load bound that is no longer wanted is unbound, but only
// while it still runs qtask (the user may have rebound it since). A
// default key the user has bound to something else is left alone (doctor
// reports it); a key chosen with its option is bound regardless.
func Install(ctx context.Context, server tmux.Server, bin string) ([]Binding, error) {
	options, err := ReadOptions(ctx, server)
	if err != nil {
		return nil, err
	}
	version, _ := tmux.Version(ctx) // unknown: a recent tmux
	bindings := Bindings(bin, options, version)
	wanted := map[string]bool{}
	for _, b := range bindings {
		wanted[b.Key] = true
	}
	previous, err := server.GlobalOption(ctx, optBoundKeys)
	if err != nil {
		return nil, err
	}
	for _, key := range strings.Fields(previous) {
		if wanted[key] {
			continue
		}
		if line, err := server.PrefixBinding(ctx, key); err == nil && strings.Contains(line, bin) {
			if err := server.UnbindPrefix(ctx, key); err != nil {
				return nil, err
			}
		}
	}
	keys := make([]string, 0, len(bindings))
	ours := ownMarkers(bin, options, version)
	for _, b := range bindings {
		if options[b.Option] == "" {
			line, err := server.PrefixBinding(ctx, b.Key)
			if err != nil {
				return nil, err
			}
			if line != "" && !containsAny(line, ours[b.Option]) {
				continue // the user's own binding of the default key
			}
		}
		if err := server.BindPrefix(ctx, b.Key, b.Args...); err != nil {
			return nil, fmt.Errorf("bind prefix %s (%s, from %s): %w", b.Key, b.What, b.Option, err)
		}
		keys = append(keys, b.Key)
	}
	if err := installHooks(ctx, server, bin); err != nil {
		return nil, err
	}
	if strings.Join(keys, " ") != previous {
		return bindings, server.SetGlobalOption(ctx, optBoundKeys, strings.Join(keys, " "))
	}
	return bindings, nil
}

// ownMarkers are the markers of every binding qtask makes for each
// option, in either menu style: a default key an earlier load bound in the
// other style is still qtask's, so a reload after @qtask-menu-style changed
// rebinds it rather than take it for the user's own.
func ownMarkers(bin string, options map[string]string, version string) map[string][]string {
	markers := map[string][]string{}
	for _, style := range []string{MenuPopup, MenuTmux} {
		styled := maps.Clone(options)
		styled[OptMenuStyle] = style
		for _, b := range Bindings(bin, styled, version) {
			markers[b.Option] = append(markers[b.Option], b.Marker)
		}
	}
	return markers
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// closeHooks are the tmux hooks that fire when a pane goes away: a window
// closed or killed (each window of a killed session too), and kill-pane
// (prefix x) in a window with other panes.
var closeHooks = []string{"window-unlinked", "after-kill-pane"}

// hookMarker is how the plugin's hook is recognised, whichever qtask binary
// it runs.
const hookMarker = "'_panes-closed'"

// installHooks makes tmux run `qtask _panes-closed` when a pane goes away,
// so a task whose pane the user killed settles at once. Hooks are arrays:
// the plugin takes a free index and, on a reload, the one it took before,
// leaving the user's own hooks alone.
func installHooks(ctx context.Context, server tmux.Server, bin string) error {
	command := tmux.ShellCommand([]string{bin, "_panes-closed"})
	for _, name := range closeHooks {
		hooks, err := server.GlobalHooks(ctx, name)
		if err != nil {
			return fmt.Errorf("read the %s hooks: %w", name, err)
		}
		index := -1
		for i, c := range hooks {
			if strings.Contains(c, hookMarker) {
				index = i
			}
		}
		for i := 0; index < 0; i++ {
			if hooks[i] == "" {
				index = i
			}
		}
		if err := server.SetGlobalHook(ctx, name, index, "run-shell", "-b", command); err != nil {
			return fmt.Errorf("set the %s hook: %w", name, err)
		}
	}
	return nil
}

// MissingHooks lists the tmux hooks the plugin sets (closeHooks) that do
// not run qtask: the plugin was never loaded, or they were unset since.
func MissingHooks(ctx context.Context, server tmux.Server) ([]string, error) {
	var missing []string
	for _, name := range closeHooks {
		hooks, err := server.GlobalHooks(ctx, name)
		if err != nil {
			return nil, err
		}
		found := false
		for _, c := range hooks {
			found = found || strings.Contains(c, hookMarker)
		}
		if !found {
			missing = append(missing, name)
		}
	}
	return missing, nil
}

// Missing lists the bindings the user's options ask for that the server
// does not have as the plugin binds them (with any qtask binary): the
// plugin was never loaded, the key was rebound since, or an older qtask
// bound it (the popup without its client: Enter could switch another).
func Missing(ctx context.Context, server tmux.Server) ([]Binding, error) {
	options, err := ReadOptions(ctx, server)
	if err != nil {
		return nil, err
	}
	version, _ := tmux.Version(ctx)
	var missing []Binding
	for _, b := range Bindings("qtask", options, version) {
		line, err := server.PrefixBinding(ctx, b.Key)
		if err != nil {
			return nil, err
		}
		if !strings.Contains(line, b.Marker) || !strings.Contains(line, b.Current) {
			missing = append(missing, b)
		}
	}
	return missing, nil
}
