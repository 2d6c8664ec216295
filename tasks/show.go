package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/qtask/qtask/tmux"
)

// Caller is where a command was run from: its tmux pane and the server
// that pane is on ($TMUX_PANE and $TMUX), both zero outside tmux. Whether
// a task's window can open beside the caller, or the caller's client can
// switch to it, depends on the two being on the same server.
type Caller struct {
	Pane   tmux.PaneID
	Server tmux.Server
}

// CallerAt is the caller in pane of the server listening on socket (the
// first field of $TMUX); zero when either is missing: outside tmux.
func CallerAt(socket, pane string) Caller {
	if socket == "" || pane == "" {
		return Caller{}
	}
	return Caller{Pane: tmux.PaneID(pane), Server: tmux.NewSocketServer(socket)}
}

// Inside reports whether the caller runs in a tmux pane.
func (c Caller) Inside() bool { return c.Pane != "" }

// On reports whether the caller's pane is on server, so tmux commands on
// server can name it.
func (c Caller) On(server tmux.Server) bool {
	return c.Inside() && c.Server.Same(server)
}

// ShowWay is how Show brings a task's pane into view.
type ShowWay int

const (
	// ShowSwitch switches the caller's tmux client to the task's pane.
	ShowSwitch ShowWay = iota + 1
	// ShowJoin joins the task's pane into the caller's window.
	ShowJoin
	// ShowAttach runs a tmux client attached to the task's server on the
	// caller's terminal: the caller is outside tmux.
	ShowAttach
)

// ShowOptions say who asks to see a task and how.
type ShowOptions struct {
	Caller Caller
	Here   bool     // join the pane beside the caller instead of switching
	Env    []string // the environment of the client ShowAttach starts
	// InTmux is the server of the caller's $TMUX, given even when the
	// caller is in no pane ($TMUX_PANE unset: a display-popup, such as the
	// plugin's task menu). There the caller has a tmux client to switch,
	// and a client attached on the popup's terminal would nest in it.
	InTmux *tmux.Server
	// Client, if set, is the tmux client to switch (a name list-clients
	// shows): the one whose popup asked. Left to tmux, a switch from a
	// popup goes to the client used last, and keys typed into a popup do
	// not count as use, so with two terminals attached the other one
	// could switch.
	Client string
}

// Showing is Show's decision, so the caller can say what is about to
// happen before Do does it (ShowAttach returns only when the client
// detaches).
type Showing struct {
	Way ShowWay
	// SameSession, after Do switched the caller's client, says the task's
	// pane is in the caller's own session: the way back is the last
	// window, not the last session.
	SameSession bool

	server tmux.Server
	pane   tmux.PaneID
	opts   ShowOptions
}

// Show decides how to bring t's pane into view for opts.Caller: only a
// running task with a pane, or a failed one whose pane was kept and is
// still open, can be shown, and a caller inside tmux can only reach panes
// on its own server.
func (s *Store) Show(t *Task, opts ShowOptions) (*Showing, error) {
	if !t.Running() && !t.PaneKept {
		return nil, &NotRunningError{Task: t}
	}
	if t.PaneID == "" {
		return nil, fmt.Errorf("task %s has no tmux pane yet; try again in a moment", t.ID)
	}
	server, err := s.ServerOf(t)
	if err != nil {
		return nil, err
	}
	if !t.Running() && !keptPaneOpen(server, t) {
		return nil, &NotRunningError{Task: t}
	}
	sh := &Showing{server: server, pane: tmux.PaneID(t.PaneID), opts: opts}
	inside := opts.Caller.Inside()
	// A client of one server cannot show another server's pane, and a
	// client attached to it from within tmux (a popup without a pane
	// included) would nest one tmux in the other.
	otherServer := inside && !opts.Caller.On(server) || !inside && opts.InTmux != nil && !opts.InTmux.Same(server)
	switch {
	case otherServer:
		return nil, fmt.Errorf("task %s runs on another tmux server; from outside tmux run `qtask attach %s`, or `tmux %s attach`",
			t.ID, t.ID, strings.Join(server.Args(), " "))
	case opts.Here && !inside:
		return nil, &ArgumentError{Msg: "attach --here works inside tmux only"}
	case opts.Here:
		sh.Way = ShowJoin
	case inside, opts.InTmux != nil:
		sh.Way = ShowSwitch
	default:
		sh.Way = ShowAttach
	}
	return sh, nil
}

// Do carries out the decision. For ShowAttach it returns once the client
// detaches.
func (sh *Showing) Do(ctx context.Context) error {
	switch sh.Way {
	case ShowJoin:
		return sh.server.JoinHere(ctx, sh.pane, sh.opts.Caller.Pane)
	case ShowSwitch:
		here, err := sh.server.SessionOf(ctx, sh.opts.Caller.Pane)
		there, err2 := sh.server.SessionOf(ctx, sh.pane)
		sh.SameSession = err == nil && err2 == nil && here == there
		return sh.server.SwitchClientTo(ctx, sh.opts.Client, sh.pane)
	}
	return sh.server.Attach(ctx, sh.pane, sh.opts.Env)
}
