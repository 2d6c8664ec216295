package tmux

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Message shows text on one client's status line. Key bindings report this
// way: run-shell output would open view mode in the user's pane, where the
// next keystrokes go nowhere.
func (s Server) Message(ctx context.Context, client, text string) error {
	_, err := s.run(ctx, "display-message", "-c", literalArg(client), "--", formatArg(text))
	return err
}

// MessageFor is Message shown for d (display-message -d, tmux 3.2 and
// later) instead of the server's display-time, 750 ms unless set; d = 0
// keeps it until a key is pressed.
func (s Server) MessageFor(ctx context.Context, client, text string, d time.Duration) error {
	ms := strconv.FormatInt(d.Milliseconds(), 10)
	_, err := s.run(ctx, "display-message", "-d", ms, "-c", literalArg(client), "--", formatArg(text))
	return err
}

// SessionClients names the clients attached to session, for messages meant
// for the people looking at it and nobody else.
func (s Server) SessionClients(ctx context.Context, session SessionID) ([]string, error) {
	return s.clientField(ctx, session, "#{client_name}")
}

// ClientTTYs names the terminals of the clients attached to session.
func (s Server) ClientTTYs(ctx context.Context, session SessionID) ([]string, error) {
	return s.clientField(ctx, session, "#{client_tty}")
}

func (s Server) clientField(ctx context.Context, session SessionID, format string) ([]string, error) {
	out, err := s.run(ctx, "list-clients", "-t", string(session), "-F", format)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// GlobalOption reads a global option ("" when unset). User options (@name)
// are the plugin's settings.
func (s Server) GlobalOption(ctx context.Context, name string) (string, error) {
	return s.run(ctx, "show-options", "-gqv", literalArg(name))
}

// SetGlobalOption sets a global user option. The value is stored as text;
// tmux expands formats in it only where the user asks (#{E:@name}).
func (s Server) SetGlobalOption(ctx context.Context, name, value string) error {
	_, err := s.run(ctx, "set-option", "-g", literalArg(name), literalArg(value))
	return err
}

// PrefixBinding is the list-keys line of prefix+key, "" if it is unbound.
// The whole table is listed and searched: `list-keys -T prefix KEY` of a
// key not bound fails, and tmux 3.3a keeps that "unknown key: KEY" in its
// message log (show-messages) for every load of the plugin.
func (s Server) PrefixBinding(ctx context.Context, key string) (string, error) {
	out, err := s.run(ctx, "list-keys", "-T", "prefix")
	if err != nil {
		return "", err
	}
	want := keyName(key)
	for _, line := range strings.Split(out, "\n") {
		if bound, ok := listedKey(line); ok && bound == want {
			return line, nil
		}
	}
	return "", nil
}

// listedKey is the key of a list-keys line ("bind-key [-r] -T TABLE KEY
// COMMAND…"), as keyName spells it; tmux escapes a key its parser treats
// specially with a backslash (\#, \;, \").
func listedKey(line string) (string, bool) {
	fields := strings.Fields(line)
	for i, f := range fields {
		if f == "-T" && i+2 < len(fields) {
			k := fields[i+2]
			if len(k) > 1 && k[0] == '\\' {
				k = k[1:]
			}
			return keyName(k), true
		}
	}
	return "", false
}

// keyName spells a key as list-keys prints it, for the ways a person may
// write the same key in an option: modifiers in either case (m-p is M-p),
// and ^x for C-x.
func keyName(key string) string {
	if len(key) == 2 && key[0] == '^' {
		key = "C-" + strings.ToLower(key[1:])
	}
	prefix := ""
	for len(key) > 2 && key[1] == '-' && strings.ContainsRune("cmsCMS", rune(key[0])) {
		prefix += strings.ToUpper(key[:1]) + "-"
		key = key[2:]
	}
	return prefix + key
}

// BindPrefix binds prefix+key to the tmux command args (its arguments
// are expanded as formats when the key is pressed, as tmux does).
func (s Server) BindPrefix(ctx context.Context, key string, args ...string) error {
	argv := []string{"bind-key", "-T", "prefix", literalArg(key)}
	for _, a := range args {
		argv = append(argv, literalArg(a))
	}
	_, err := s.run(ctx, argv...)
	return err
}

// UnbindPrefix removes prefix+key.
func (s Server) UnbindPrefix(ctx context.Context, key string) error {
	_, err := s.run(ctx, "unbind-key", "-T", "prefix", literalArg(key))
	return err
}

// PaneCommands lists every pane the server has, with the command running
// in its foreground (pane_current_command: "bash", "sleep").
func (s Server) PaneCommands(ctx context.Context) (map[PaneID]string, error) {
	out, err := s.run(ctx, "list-panes", "-a", "-F", "#{pane_id} #{pane_current_command}")
	if err != nil {
		return nil, err
	}
	panes := map[PaneID]string{}
	for _, line := range strings.Split(out, "\n") {
		if id, command, _ := strings.Cut(line, " "); id != "" {
			panes[PaneID(id)] = command
		}
	}
	return panes, nil
}

// GlobalHooks are the commands set on the global hook name (an array in
// tmux: name[0], name[5]…), by index, as show-hooks prints them.
func (s Server) GlobalHooks(ctx context.Context, name string) (map[int]string, error) {
	out, err := s.run(ctx, "show-hooks", "-g", literalArg(name))
	if err != nil {
		return nil, err
	}
	hooks := map[int]string{}
	for _, line := range strings.Split(out, "\n") {
		head, command, ok := strings.Cut(line, " ")
		index, found := strings.CutPrefix(head, name+"[")
		n, err := strconv.Atoi(strings.TrimSuffix(index, "]"))
		if ok && found && err == nil {
			hooks[n] = command
		}
	}
	return hooks, nil
}

// SetGlobalHook sets the global hook name[index] to run argv, a tmux
// command and its arguments, each quoted for tmux's parser.
func (s Server) SetGlobalHook(ctx context.Context, name string, index int, argv ...string) error {
	_, err := s.run(ctx, "set-hook", "-g", fmt.Sprintf("%s[%d]", name, index), commandLine(argv))
	return err
}

// commandLine renders a tmux command and its arguments as one line for
// tmux's command parser (a hook, a menu item): each word in double quotes,
// with the characters it treats specially there (\, ", $) escaped.
func commandLine(argv []string) string {
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = `"` + quote.Replace(a) + `"`
	}
	return strings.Join(words, " ")
}

// MenuItem is one line of a display-menu: Name (a format: '#' doubled
// here) chosen with Key runs the tmux command Command. A zero MenuItem is
// a separator.
type MenuItem struct {
	Name, Key string
	Command   []string
}

// DisplayMenu shows a menu of items on client, titled title.
func (s Server) DisplayMenu(ctx context.Context, client, title string, items []MenuItem) error {
	argv := []string{"display-menu", "-c", client, "-T", strings.ReplaceAll(title, "#", "##")}
	for _, it := range items {
		if it.Name == "" {
			argv = append(argv, "")
			continue
		}
		argv = append(argv, literalArg(strings.ReplaceAll(it.Name, "#", "##")), literalArg(it.Key), commandLine(it.Command))
	}
	_, err := s.run(ctx, argv...)
	return err
}

// Version is `tmux -V` ("tmux 3.3a"), which needs no server.
func Version(ctx context.Context) (string, error) {
	if !installed() {
		return "", ErrNotInstalled
	}
	out, err := exec.CommandContext(ctx, "tmux", "-V").Output()
	if err != nil {
		return "", &Error{Args: []string{"-V"}, Err: err}
	}
	return strings.TrimSpace(string(out)), nil
}

// VersionAtLeast reports whether v, what `tmux -V` prints ("tmux 3.3a",
// "tmux next-3.4", "tmux master"), is major.minor or later, comparing the
// numbers as numbers (3.10 is after 3.9). A build without a readable
// number is taken for a recent one.
func VersionAtLeast(v string, major, minor int) bool {
	m := versionNumber().FindStringSubmatch(v)
	if m == nil {
		return true
	}
	gotMajor, err1 := strconv.Atoi(m[1])
	gotMinor, err2 := strconv.Atoi(m[2])
	if err1 != nil || err2 != nil {
		return true
	}
	return gotMajor > major || gotMajor == major && gotMinor >= minor
}

// versionNumber is compiled on first use, not as the package loads: a
// regexp compiled at start-up is paid by every command, and most never
// compare versions.
var versionNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d+)\.(\d+)`) })

// PID is the server's process id; an error (ErrNoServer) when no server
// listens on its socket.
func (s Server) PID(ctx context.Context) (int, error) {
	out, err := s.run(ctx, "display-message", "-p", "#{pid}")
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(out)
	if err != nil {
		return 0, &Error{Args: []string{"display-message", "-p", "#{pid}"}, Stderr: "unexpected output " + out, Err: err}
	}
	return pid, nil
}
