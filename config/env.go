package config

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Env is every piece of the process environment qtask depends on, resolved
// once so that the rest of the program never reads environment variables
// itself and precedence rules live in exactly one place.
//
// An empty variable is treated exactly like an unset one.
type Env struct {
	// StateDir is where qtask keeps task records and output. It is
	// $QTASK_STATE_DIR (made absolute), else $XDG_STATE_HOME/qtask, else
	// $HOME/.local/state/qtask. It is always an absolute path.
	StateDir string
	// StateHome is the directory the default StateDir is made in:
	// $XDG_STATE_HOME, or $HOME; "" when $QTASK_STATE_DIR names StateDir.
	// qtask creates the levels below it, never StateHome itself: a home
	// that does not exist is a mistake to report. StateHomeVar names the
	// variable it came from ("XDG_STATE_HOME" or "HOME"), for that report.
	StateHome, StateHomeVar string
	// ConfigPath is the config file to pass to Load. It is $QTASK_CONFIG
	// (made absolute), else $XDG_CONFIG_HOME/qtask/config.toml, else
	// $HOME/.config/qtask/config.toml. It is empty only when none of those
	// variables is usable; Load treats an empty path as "no file".
	ConfigPath string
	// TmuxSocket is $QTASK_TMUX_SOCKET, an explicit tmux server socket path
	// that overrides any other choice of server; empty if unset.
	TmuxSocket string
	// Tmux is $TMUX exactly as tmux sets it inside a pane
	// ("socketpath,pid,session"); empty when not running inside tmux.
	Tmux string
	// TmuxPane is $TMUX_PANE, the pane id such as "%3"; empty outside tmux.
	TmuxPane string
	// Term is $TERM. In a task's wrapper it is what tmux set for the pane,
	// given to a command whose caller had none.
	Term string
	// Scope is whose the tasks this process starts are, and whose
	// notifications it reads, as far as the environment says:
	// ChosenScope, else AgentSession, else the person's place: $TMUX_PANE,
	// else "default"; never empty. A process whose environment names no
	// scope may still work for an agent that does not say so (gemini-cli's
	// shell tool): the caller asks the state dir (see launch.Scope).
	Scope string
	// ChosenScope is $QTASK_SCOPE: a scope someone chose (a person for
	// the agent they start, a hook, qtask for a task's own commands).
	ChosenScope string
	// AgentSession is the session of the coding agent whose tool or hook
	// runs qtask: "claude:ID" from $CLAUDE_CODE_SESSION_ID, else "qwen:ID"
	// from $QWEN_CODE_SESSION_ID (both agents set them for their commands,
	// hooks and MCP servers), else "gemini:ID" from $GEMINI_SESSION_ID
	// (gemini-cli sets it for its hooks only); empty if none is set.
	AgentSession string
	// TmuxTmpdir is $TMUX_TMPDIR, where tmux keeps its sockets (tmux's
	// default, /tmp, when empty): it tells where `tmux -L NAME` listens.
	TmuxTmpdir string
	// Home is $HOME when it is absolute, else empty: where the coding
	// agents keep their user settings.
	Home string
	// XDGConfigHome is $XDG_CONFIG_HOME when it is absolute (the XDG
	// specification ignores a relative one), else empty: where git keeps
	// its global excludes file unless core.excludesFile says otherwise.
	XDGConfigHome string
	// ClaudeConfigDir is $CLAUDE_CONFIG_DIR, Claude Code's replacement for
	// ~/.claude; empty if unset.
	ClaudeConfigDir string
	// Agent is true when $QTASK_AGENT is set to anything but "0" or
	// "false": qtask is run by a coding agent's tool (`qtask agent
	// install` sets it for the agent's tool processes) and words its
	// results for the agent.
	Agent bool
	// Locale is the character-type locale in force: $LC_ALL, else
	// $LC_CTYPE, else $LANG ("" when none is set, which is "C").
	Locale string
	// NoColor is $NO_COLOR set to anything (no-color.org): no colours even
	// on a terminal.
	NoColor bool
	// ClaudeBashTimeout is $BASH_DEFAULT_TIMEOUT_MS, the default timeout
	// of Claude Code's Bash tool in milliseconds, as Claude's commands see
	// it; empty if unset.
	ClaudeBashTimeout string
	// ClaudeBashMaxTimeout is $BASH_MAX_TIMEOUT_MS, the longest timeout
	// the model may give one Bash call, in milliseconds; empty if unset.
	ClaudeBashMaxTimeout string
	// ClaudeShellPrefix is $CLAUDE_CODE_SHELL_PREFIX and ClaudeSessionID
	// $CLAUDE_CODE_SESSION_ID, as Claude Code sets them for its commands
	// and hooks; empty if unset.
	ClaudeShellPrefix, ClaudeSessionID string
	// ClaudeEntrypoint is $CLAUDE_CODE_ENTRYPOINT and ClaudePID
	// $CLAUDE_PID, as Claude Code 2.1.330 sets them for its hooks
	// (measured: "cli" in its TUI, "sdk-cli" under -p; the pid of Claude
	// itself); empty if unset.
	ClaudeEntrypoint, ClaudePID string
	// QwenSessionID is $QWEN_CODE_SESSION_ID, as qwen-code sets it for
	// its shell commands and hooks; empty if unset.
	QwenSessionID string
}

// SessionScope is the scope of a coding agent's session: "AGENT:ID", ""
// when the session is not known.
func SessionScope(agent, id string) string {
	if id == "" {
		return ""
	}
	return agent + ":" + id
}

// DefaultScope is the scope of a person's tasks started outside tmux.
const DefaultScope = "default"

// EnvFrom resolves an Env through getenv (os.Getenv in the real program, a
// map lookup in tests). Per the XDG Base Directory specification, relative
// XDG_STATE_HOME and XDG_CONFIG_HOME values are ignored; a relative HOME is
// ignored too, because a path that depends on the working directory would
// give each task a different state directory. Relative QTASK_STATE_DIR and
// QTASK_CONFIG values are explicit user choices and are made absolute
// against the working directory.
//
// The only error is that no state directory can be determined; its message
// names the variable to set. Every other field always resolves.
func EnvFrom(getenv func(string) string) (Env, error) {
	e := Env{
		TmuxSocket: getenv("QTASK_TMUX_SOCKET"),
		Tmux:       getenv("TMUX"),
		TmuxPane:   getenv("TMUX_PANE"),
		Term:       getenv("TERM"),
		TmuxTmpdir: getenv("TMUX_TMPDIR"),
		Locale:     firstNonEmpty(getenv("LC_ALL"), getenv("LC_CTYPE"), getenv("LANG")),
		NoColor:    getenv("NO_COLOR") != "",
	}
	switch v := getenv("QTASK_AGENT"); v {
	case "", "0", "false":
	default:
		e.Agent = true
	}
	e.AgentSession = firstNonEmpty(SessionScope("claude", getenv("CLAUDE_CODE_SESSION_ID")),
		SessionScope("qwen", getenv("QWEN_CODE_SESSION_ID")), SessionScope("gemini", getenv("GEMINI_SESSION_ID")))
	e.ChosenScope = getenv("QTASK_SCOPE")
	e.Scope = firstNonEmpty(e.ChosenScope, e.AgentSession, e.TmuxPane, DefaultScope)

	home := absOnly(getenv("HOME"))
	e.Home, e.ClaudeConfigDir = home, getenv("CLAUDE_CONFIG_DIR")
	e.XDGConfigHome = absOnly(getenv("XDG_CONFIG_HOME"))
	e.ClaudeBashTimeout = getenv("BASH_DEFAULT_TIMEOUT_MS")
	e.ClaudeBashMaxTimeout = getenv("BASH_MAX_TIMEOUT_MS")
	e.ClaudeShellPrefix, e.ClaudeSessionID = getenv("CLAUDE_CODE_SHELL_PREFIX"), getenv("CLAUDE_CODE_SESSION_ID")
	e.ClaudeEntrypoint, e.ClaudePID = getenv("CLAUDE_CODE_ENTRYPOINT"), getenv("CLAUDE_PID")
	e.QwenSessionID = getenv("QWEN_CODE_SESSION_ID")

	var err error
	e.StateDir, e.StateHome, e.StateHomeVar, err = resolveDir(getenv, "QTASK_STATE_DIR", "XDG_STATE_HOME", home, ".local/state", "qtask")
	if err != nil {
		return Env{}, err
	}
	if e.StateDir == "" {
		return Env{}, errors.New("cannot determine the qtask state directory: " +
			"QTASK_STATE_DIR is unset, XDG_STATE_HOME is unset or relative, and HOME is unset or relative; " +
			"set QTASK_STATE_DIR to the directory qtask should use")
	}
	e.ConfigPath, _, _, err = resolveDir(getenv, "QTASK_CONFIG", "XDG_CONFIG_HOME", home, ".config", filepath.Join("qtask", "config.toml"))
	if err != nil {
		return Env{}, err
	}
	return e, nil
}

// AgentScopes are the scopes the environment names for a coding agent:
// ChosenScope and AgentSession, those that are set. Never the person's
// place ($TMUX_PANE, "default"): an agent's hooks read these (and the
// session their event names), so a task a person started in the same
// pane, or outside tmux, is never told to an agent.
func (e Env) AgentScopes() []string {
	var scopes []string
	for _, s := range []string{e.ChosenScope, e.AgentSession} {
		if s != "" && !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return scopes
}

// TmuxSocketFromTMUX returns the socket path part of $TMUX (everything
// before the first comma), so qtask can talk to the tmux server it is
// running inside. It returns "" when $TMUX is empty.
func (e Env) TmuxSocketFromTMUX() string {
	socket, _, _ := strings.Cut(e.Tmux, ",")
	return socket
}

// resolveDir applies qtask's three-level precedence: the explicit qtask
// variable (made absolute), else $xdgVar/suffix when xdgVar is absolute,
// else home/homeRel/suffix when home is known. It returns "" when nothing
// applies. base is the directory the result was built in ($xdgVar or
// home) and baseVar the variable naming it; both are "" for the explicit
// variable.
func resolveDir(getenv func(string) string, qtaskVar, xdgVar, home, homeRel, suffix string) (dir, base, baseVar string, err error) {
	if v := getenv(qtaskVar); v != "" {
		abs, err := filepath.Abs(v)
		if err != nil {
			return "", "", "", fmt.Errorf("make %s=%q absolute: %w", qtaskVar, v, err)
		}
		return abs, "", "", nil
	}
	if xdg := absOnly(getenv(xdgVar)); xdg != "" {
		return filepath.Join(xdg, suffix), xdg, xdgVar, nil
	}
	if home != "" {
		return filepath.Join(home, homeRel, suffix), home, "HOME", nil
	}
	return "", "", "", nil
}

// absOnly returns p if it is an absolute path and "" otherwise.
func absOnly(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return ""
}

// firstNonEmpty returns the first of vals that is not "".
func firstNonEmpty(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
